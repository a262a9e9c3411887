// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/process_status_parser.hpp"

#include <climits>
#include <cstdint>
#include <limits>

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

// The status fields read. Each has a bit, to refuse a field given twice (a file that says two
// things is not one to trust) and to tell which were present.
constexpr unsigned kName = 1u << 0;
constexpr unsigned kTgid = 1u << 1;
constexpr unsigned kVmSize = 1u << 2;

struct ByteField {
  std::string_view name;
  unsigned bit;
  std::uint64_t ProcessStatus::*member;
};
constexpr ByteField kByteFields[] = {
    {"VmSize", kVmSize, &ProcessStatus::virtual_bytes},
    {"RssAnon", 1u << 3, &ProcessStatus::rss_anon_bytes},
    {"RssFile", 1u << 4, &ProcessStatus::rss_file_bytes},
    {"RssShmem", 1u << 5, &ProcessStatus::rss_shmem_bytes},
    {"VmSwap", 1u << 6, &ProcessStatus::swap_bytes},
    {"VmData", 1u << 7, &ProcessStatus::data_bytes},
    {"VmStk", 1u << 8, &ProcessStatus::stack_bytes},
};

// "   3060 kB" in bytes.
Expected<std::uint64_t> parse_kb_value(std::string_view value) {
  const std::string_view number = text::next_token(value);
  const std::string_view unit = text::next_token(value);
  if (unit != "kB" || !text::next_token(value).empty()) return make_error("expected '<number> kB'");
  auto kb = text::parse_u64(number);
  if (!kb) return kb.error();
  if (*kb > std::numeric_limits<std::uint64_t>::max() / 1024) {
    return make_error("kB value overflows 64 bits in bytes");
  }
  return *kb * 1024;
}

Expected<int> parse_tgid(std::string_view value) {
  auto tgid = text::parse_u64(text::trim(value));
  if (!tgid) return tgid.error();
  if (*tgid == 0 || *tgid > static_cast<std::uint64_t>(INT_MAX)) return make_error("not a process id");
  return static_cast<int>(*tgid);
}

}  // namespace

Expected<ProcessStatus> parse_process_status(std::string_view text) {
  ProcessStatus status;
  unsigned seen = 0;
  auto st = text::for_each_line(text, text::kFieldLimit, [&](const text::Line& line) -> Status {
    const std::size_t colon = line.text.find(':');
    if (colon == std::string_view::npos) return Ok{};  // not a field we read: ignored
    const std::string_view name = line.text.substr(0, colon);
    std::string_view value = line.text.substr(colon + 1);
    const ByteField* byte_field = nullptr;
    unsigned field = 0;
    if (name == "Name") {
      field = kName;
    } else if (name == "Tgid") {
      field = kTgid;
    } else {
      for (const ByteField& f : kByteFields) {
        if (name == f.name) byte_field = &f;
      }
      if (byte_field == nullptr) return Ok{};  // the other ~50 fields
      field = byte_field->bit;
    }
    if (seen & field) return line.error("duplicate field");
    seen |= field;
    if (field == kName) {
      // The kernel writes "Name:\t" and then the name as it is, spaces and all (only '\n' and
      // '\\' are escaped), so nothing is trimmed but that one tab.
      if (!value.empty() && value.front() == '\t') value.remove_prefix(1);
      status.name = value;
      return Ok{};
    }
    if (field == kTgid) {
      auto tgid = parse_tgid(value);
      if (!tgid) return line.error(tgid.error().message);
      status.tgid = *tgid;
      return Ok{};
    }
    auto parsed = parse_kb_value(value);
    if (!parsed) return line.error(parsed.error().message);
    status.*(byte_field->member) = *parsed;
    return Ok{};
  });
  if (!st) return st.error();
  // Name and Tgid are the first lines the kernel writes: without them the text was cut short.
  if (!(seen & kName)) return make_error("truncated: no Name field");
  if (!(seen & kTgid)) return make_error("truncated: no Tgid field");
  // Kernel threads and zombies have no mm, and so no Vm*/Rss* lines.
  status.has_mm = (seen & kVmSize) != 0;
  return status;
}

Expected<std::string_view> memory_cgroup_of(std::string_view proc_pid_cgroup, CgroupVersion version) {
  std::string_view found;
  bool have = false;
  auto st = text::for_each_line(proc_pid_cgroup, text::kFieldLimit, [&](const text::Line& line) -> Status {
    // "hierarchy-id:controller-list:path"; the path may itself hold ':'.
    const std::size_t first = line.text.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.text.find(':', first + 1);
    if (second == std::string_view::npos) return line.error("expected 'id:controllers:path'");
    if (auto id = text::parse_u64(line.text.substr(0, first)); !id) return line.error(id.error().message);
    const std::string_view controllers = line.text.substr(first + 1, second - first - 1);
    const std::string_view path = line.text.substr(second + 1);
    if (path.empty() || path.front() != '/') return line.error("cgroup path does not start with '/'");
    bool is_memory = false;
    if (version == CgroupVersion::kV2) {
      is_memory = controllers.empty() && line.text.substr(0, first) == "0";
    } else {
      for (std::string_view rest = controllers; !rest.empty() && !is_memory;) {
        const std::size_t comma = rest.find(',');
        is_memory = rest.substr(0, comma) == "memory";
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    }
    if (!is_memory) return Ok{};
    if (have) return line.error("memory cgroup listed twice");
    found = path;
    have = true;
    return Ok{};
  });
  if (!st) return st.error();
  if (!have) {
    return make_error(version == CgroupVersion::kV2 ? "no '0::/path' line (cgroup v2)"
                                                    : "no line with the memory controller (cgroup v1)");
  }
  return found;
}

void unescape_process_name(std::string_view escaped, char* out, std::size_t out_size) {
  if (out_size == 0) return;
  std::size_t n = 0;
  for (std::size_t i = 0; i < escaped.size() && n + 1 < out_size; ++i) {
    char c = escaped[i];
    if (c == '\\' && i + 1 < escaped.size() && (escaped[i + 1] == 'n' || escaped[i + 1] == '\\')) {
      c = escaped[++i] == 'n' ? '\n' : '\\';
    }
    out[n++] = c;
  }
  out[n] = '\0';
}

}  // namespace memdiag
