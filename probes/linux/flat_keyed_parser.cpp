#include "probes/linux/flat_keyed_parser.hpp"

#include "probes/linux/text_scan.hpp"

namespace memdiag {

// One pass per line, no tokenizer: this runs for ~200 lines every sample.
Status parse_flat_keyed(std::string_view text, std::vector<KeyedValue>& out) {
  out.clear();
  if (auto st = text::require_final_newline(text); !st) return st;
  text::NameSet seen;
  std::string_view rest = text;
  std::string_view line;
  std::size_t line_number = 0;
  while (text::next_line(rest, line)) {
    ++line_number;
    std::size_t i = 0;
    while (i < line.size() && text::is_word_char(line[i])) ++i;
    const std::string_view name = line.substr(0, i);
    if (name.empty()) {
      if (text::trim(line).empty()) continue;
      return text::line_error(line_number, line, "bad field name");
    }
    if (i == line.size()) return text::line_error(line_number, line, "expected 'name value'");
    if (line[i] != ' ') return text::line_error(line_number, line, "bad field name");
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t digits_end = i;
    while (digits_end < line.size() && line[digits_end] >= '0' && line[digits_end] <= '9') ++digits_end;
    if (!text::trim(line.substr(digits_end)).empty()) {
      return text::line_error(line_number, line, digits_end == i ? "expected a number" : "trailing text after value");
    }
    auto value = text::parse_u64(line.substr(i, digits_end - i));
    if (!value) return text::line_error(line_number, line, value.error().message);
    if (out.size() >= text::kMaxFields) {
      return text::line_error(line_number, line, "more fields than any kernel has");
    }
    if (!seen.insert(name, out.size(), [&out](std::size_t k) { return out[k].name; })) {
      return text::line_error(line_number, line, "duplicate field");
    }
    out.push_back(KeyedValue{name, *value});
  }
  if (out.empty()) return make_error("no fields (empty or blank file)");
  return Ok{};
}

}  // namespace memdiag
