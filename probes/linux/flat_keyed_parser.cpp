// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/flat_keyed_parser.hpp"

#include "probes/linux/text_scan.hpp"

namespace memdiag {

// One pass per line, no tokenizer: this runs for ~200 lines every sample.
Status parse_flat_keyed(std::string_view text, std::vector<KeyedValue>& out) {
  out.clear();
  text::NameSet seen;
  auto st = text::for_each_line(text, text::kFieldLimit, [&](const text::Line& line) -> Status {
    const std::string_view s = line.text;
    std::size_t i = 0;
    while (i < s.size() && text::is_word_char(s[i])) ++i;
    const std::string_view name = s.substr(0, i);
    if (name.empty()) return line.error("bad field name");
    if (i == s.size()) return line.error("expected 'name value'");
    if (s[i] != ' ') return line.error("bad field name");
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t digits_end = i;
    while (digits_end < s.size() && s[digits_end] >= '0' && s[digits_end] <= '9') ++digits_end;
    if (!text::trim(s.substr(digits_end)).empty()) {
      return line.error(digits_end == i ? "expected a number" : "trailing text after value");
    }
    auto value = text::parse_u64(s.substr(i, digits_end - i));
    if (!value) return line.error(value.error().message);
    if (!seen.insert(name, out.size(), [&out](std::size_t k) { return out[k].name; })) {
      return line.error("duplicate field");
    }
    out.push_back(KeyedValue{name, *value});
    return Ok{};
  });
  if (!st) return st;
  if (out.empty()) return make_error("no fields (empty or blank file)");
  return Ok{};
}

}  // namespace memdiag
