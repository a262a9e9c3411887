// SPDX-License-Identifier: Apache-2.0
#include "daemon/process_self.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

namespace memdiag {
namespace {

template <typename T>
std::optional<T> number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The descriptors open in this process: the entries of /proc/self/fd less the directory's own.
std::optional<std::uint64_t> open_descriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  std::uint64_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count > 0 ? count - 1 : 0;
}

}  // namespace

Expected<prom::ProcessSelf> parse_self_stat(std::string_view stat, long ticks_per_second, std::uint64_t page_size,
                                            std::uint64_t boot_time_seconds) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields start
  // after the last ')'. Counting from state as field 3: utime 14, stime 15, starttime 22,
  // vsize 23 (bytes), rss 24 (pages).
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0) return make_error("/proc/self/stat: no '(comm)'");
  std::vector<std::string_view> fields;
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty() && fields.size() < 22) {
    const auto start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const auto end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  }
  if (fields.size() < 22) return make_error("/proc/self/stat: " + std::to_string(fields.size() + 2) + " fields, expected 24 or more");
  auto utime = number<std::uint64_t>(fields[14 - 3]);
  auto stime = number<std::uint64_t>(fields[15 - 3]);
  auto start = number<std::uint64_t>(fields[22 - 3]);
  auto vsize = number<std::uint64_t>(fields[23 - 3]);
  auto rss = number<std::int64_t>(fields[24 - 3]);
  if (!utime || !stime || !start || !vsize || !rss) return make_error("/proc/self/stat: a field is not a number");
  prom::ProcessSelf self;
  const double ticks = static_cast<double>(ticks_per_second);
  self.cpu_seconds = static_cast<double>(*utime + *stime) / ticks;
  self.start_time_seconds = static_cast<double>(boot_time_seconds) + static_cast<double>(*start) / ticks;
  self.virtual_bytes = *vsize;
  self.resident_bytes = *rss > 0 ? static_cast<std::uint64_t>(*rss) * page_size : 0;
  return self;
}

Expected<std::uint64_t> parse_boot_time(std::string_view proc_stat) {
  for (std::size_t at = 0; at < proc_stat.size();) {
    auto end = proc_stat.find('\n', at);
    if (end == std::string_view::npos) end = proc_stat.size();
    std::string_view line = proc_stat.substr(at, end - at);
    if (line.substr(0, 6) == "btime ") {
      if (auto value = number<std::uint64_t>(line.substr(6))) return *value;
      return make_error("/proc/stat: btime is not a number");
    }
    at = end + 1;
  }
  return make_error("/proc/stat: no btime line");
}

ProcessSelfReader::ProcessSelfReader()
    : stat_("/proc/self/stat", KernelFile::Reads::kOneRecord, 1024),
      ticks_per_second_(::sysconf(_SC_CLK_TCK)),
      page_size_(static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))) {
  std::string buffer;
  if (auto text = read_file_once("/proc/stat", buffer)) {
    if (auto btime = parse_boot_time(*text)) boot_time_ = *btime;
  }
}

std::optional<prom::ProcessSelf> ProcessSelfReader::read() {
  auto text = stat_.read();
  Expected<prom::ProcessSelf> self = text ? parse_self_stat(*text, ticks_per_second_, page_size_, boot_time_.value_or(0))
                                          : Expected<prom::ProcessSelf>(text.error());
  if (!self || !boot_time_) {
    if (!said_why_) {
      spdlog::warn("process_* self-metrics not exported: {}",
                   !self ? self.error().message : std::string("/proc/stat has no boot time"));
      said_why_ = true;
    }
    return std::nullopt;
  }
  self->open_fds = open_descriptors();
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) self->max_fds = limit.rlim_cur;
  return *self;
}

}  // namespace memdiag
