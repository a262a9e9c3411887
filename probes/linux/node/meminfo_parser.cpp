// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/meminfo_parser.hpp"

#include <limits>

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

// "Name" or "Name(qualifier)" as in "Active(anon)": word characters, at most one trailing
// parenthesised word.
bool is_meminfo_name(std::string_view name) {
  std::size_t i = 0;
  while (i < name.size() && text::is_word_char(name[i])) ++i;
  if (i == 0) return false;
  if (i == name.size()) return true;
  if (name[i] != '(' || name.back() != ')' || i + 2 >= name.size()) return false;
  for (std::size_t j = i + 1; j + 1 < name.size(); ++j) {
    if (!text::is_word_char(name[j])) return false;
  }
  return true;
}

}  // namespace

Status parse_meminfo(std::string_view text, std::vector<MeminfoEntry>& out) {
  out.clear();
  text::NameSet seen;
  auto st = text::for_each_line(text, text::kFieldLimit, [&](const text::Line& line) -> Status {
    const std::size_t colon = line.text.find(':');
    if (colon == std::string_view::npos || colon == 0) return line.error("expected 'Name: value [kB]'");
    const std::string_view name = line.text.substr(0, colon);
    if (!is_meminfo_name(name)) return line.error("bad field name");
    std::string_view fields = line.text.substr(colon + 1);
    const std::string_view number = text::next_token(fields);
    const std::string_view unit = text::next_token(fields);
    if (!text::next_token(fields).empty()) return line.error("trailing text after value");
    auto value = text::parse_u64(number);
    if (!value) return line.error(value.error().message);
    bool in_bytes = false;
    std::uint64_t v = *value;
    if (unit == "kB") {
      if (v > std::numeric_limits<std::uint64_t>::max() / 1024) {
        return line.error("kB value overflows 64 bits in bytes");
      }
      v *= 1024;
      in_bytes = true;
    } else if (!unit.empty()) {
      return line.error("unknown unit");
    }
    if (!seen.insert(name, out.size(), [&out](std::size_t i) { return out[i].name; })) {
      return line.error("duplicate field");
    }
    out.push_back(MeminfoEntry{name, v, in_bytes});
    return Ok{};
  });
  if (!st) return st;
  if (out.empty()) return make_error("no fields (empty or blank file)");
  return Ok{};
}

}  // namespace memdiag
