// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/promise_not_due.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "probes/linux/text_scan.hpp"
#include "probes/linux/unique_fd.hpp"

namespace memdiag {
namespace {

// Addresses, flags, offset, device and inode take under 100 bytes; the path at most PATH_MAX.
constexpr std::size_t kMaxLineBytes = 8192;

Expected<std::uint64_t> parse_hex(std::string_view digits) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return make_error("not a hexadecimal number: '" + text::excerpt(digits) + "'");
  }
  return value;
}

}  // namespace

// "7f2c4a000000-7f2c4a800000 rw-p 00000000 00:00 0        [path]"
Status MapsClassifier::add_line(std::string_view line) {
  std::string_view rest = line;
  const std::string_view range = text::next_token(rest);
  const std::string_view perms = text::next_token(rest);
  const std::string_view offset = text::next_token(rest);
  const std::string_view device = text::next_token(rest);
  const std::string_view inode_text = text::next_token(rest);
  const std::size_t dash = range.find('-');
  if (dash == std::string_view::npos || perms.size() != 4 || offset.empty() ||
      device.find(':') == std::string_view::npos || inode_text.empty()) {
    return make_error("not a maps line: '" + text::excerpt(line) + "'");
  }
  auto start = parse_hex(range.substr(0, dash));
  if (!start) return start.error();
  auto end = parse_hex(range.substr(dash + 1));
  if (!end) return end.error();
  if (*end < *start) return make_error("a mapping ends before it starts: '" + text::excerpt(line) + "'");
  if (!parse_hex(offset)) return make_error("not a maps offset: '" + text::excerpt(line) + "'");
  auto inode = text::parse_u64(inode_text);
  if (!inode) return inode.error();
  const std::string_view path = text::trim(rest);
  const std::uint64_t size = *end - *start;

  const bool writable = perms[1] == 'w';
  const bool is_private = perms[3] == 'p';
  // Anonymous: no file behind it. [heap], [stack] and friends are named but have no inode.
  const bool anonymous = *inode == 0;
  const bool unnamed = path.empty();
  if (writable && is_private && !anonymous) {
    result_.private_file_bytes += size;
  } else if (anonymous && unnamed && perms == "rw-p" && previous_is_guard_ && previous_end_ == *start) {
    result_.thread_stack_bytes += size;
  }
  previous_is_guard_ = anonymous && unnamed && perms == "---p" && size <= kMaxGuardBytes;
  previous_end_ = *end;
  ++result_.mappings;
  return Ok{};
}

Expected<PromiseNotDue> classify_maps(std::string_view text) {
  if (auto st = text::require_final_newline(text); !st) return st.error();
  MapsClassifier classifier;
  std::string_view line;
  while (text::next_line(text, line)) {
    if (auto st = classifier.add_line(line); !st) return st.error();
  }
  return classifier.result();
}

Expected<PromiseNotDue> read_promise_not_due(const std::string& path, std::uint64_t max_lines) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return make_error(path + ": " + std::strerror(errno));
  MapsClassifier classifier;
  // seq_file hands out whole lines per read; a line split across two reads is carried over.
  std::string carried;
  char chunk[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    std::string_view data(chunk, static_cast<std::size_t>(n));
    while (!data.empty()) {
      const std::size_t newline = data.find('\n');
      if (newline == std::string_view::npos) {
        if (carried.size() + data.size() > kMaxLineBytes) {
          return make_error(path + ": a line longer than " + std::to_string(kMaxLineBytes) + " bytes");
        }
        carried.append(data);
        break;
      }
      std::string_view line = data.substr(0, newline);
      if (!carried.empty()) {
        carried.append(line);
        line = carried;
      }
      if (auto st = classifier.add_line(line); !st) return make_error(path + ": " + st.error().message);
      carried.clear();
      data.remove_prefix(newline + 1);
      if (classifier.result().mappings > max_lines) {
        return make_error(path + ": more than " + std::to_string(max_lines) + " mappings");
      }
    }
  }
  if (!carried.empty()) return make_error(path + ": the last line is cut short");
  return classifier.result();
}

}  // namespace memdiag
