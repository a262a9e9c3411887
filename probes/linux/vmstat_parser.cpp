#include "probes/linux/vmstat_parser.hpp"

#include <array>

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

bool is_vmstat_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Status parse_vmstat(std::string_view text, std::vector<VmstatEntry>& out) {
  out.clear();
  text::NameSet seen;
  std::string_view rest = text;
  std::string_view line;
  std::size_t line_number = 0;
  while (text::next_line(rest, line)) {
    ++line_number;
    std::string_view fields = line;
    const std::string_view name = text::next_token(fields);
    if (name.empty()) continue;
    const std::string_view number = text::next_token(fields);
    if (number.empty()) return text::line_error(line_number, line, "expected 'name value'");
    if (!text::next_token(fields).empty()) {
      return text::line_error(line_number, line, "trailing text after value");
    }
    for (char c : name) {
      if (!is_vmstat_name_char(c)) return text::line_error(line_number, line, "bad field name");
    }
    auto value = text::parse_u64(number);
    if (!value) return text::line_error(line_number, line, value.error().message);
    if (out.size() >= text::kMaxFields) {
      return text::line_error(line_number, line, "more fields than any kernel has");
    }
    if (!seen.insert(name)) return text::line_error(line_number, line, "duplicate field");
    out.push_back(VmstatEntry{name, *value});
  }
  if (out.empty()) return make_error("no fields (empty or blank file)");
  return Ok{};
}

bool vmstat_field_is_counter(std::string_view name) {
  // nr_* fields are levels except these cumulative ones (mm/vmstat.c vmstat_text).
  static constexpr std::array<std::string_view, 11> kCumulativeNr = {
      "nr_dirtied",           "nr_written",
      "nr_throttled_written", "nr_vmscan_write",
      "nr_vmscan_immediate_reclaim",
      "nr_foll_pin_acquired", "nr_foll_pin_released",
      "nr_tlb_remote_flush",  "nr_tlb_remote_flush_received",
      "nr_tlb_local_flush_all", "nr_tlb_local_flush_one",
  };
  if (name.substr(0, 3) == "nr_") {
    for (std::string_view c : kCumulativeNr) {
      if (name == c) return true;
    }
    return false;
  }
  // Non-nr_ levels: the shadow-entry node count is a level, not an event.
  return name != "workingset_nodes";
}

}  // namespace memdiag
