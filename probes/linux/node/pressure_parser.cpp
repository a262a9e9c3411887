// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/pressure_parser.hpp"

#include <cmath>

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

Expected<PsiLine> parse_psi_fields(std::string_view fields, const text::Line& line) {
  PsiLine out;
  bool have_avg10 = false, have_avg60 = false, have_avg300 = false, have_total = false;
  for (std::string_view token = text::next_token(fields); !token.empty();
       token = text::next_token(fields)) {
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) return line.error("expected key=value");
    const std::string_view key = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    auto take_avg = [&](bool& seen, double& dst) -> Status {
      if (seen) return line.error("duplicate key");
      auto v = text::parse_decimal(value);
      if (!v) return line.error(v.error().message);
      if (*v > 100.0) return line.error("average above 100%");
      // The kernel prints percent with two decimals; dividing hundredths as integers gives the
      // nearest double (0.28 -> 0.0028, not 0.0028000000000000004).
      dst = std::round(*v * 100.0) / 10000.0;
      seen = true;
      return Ok{};
    };
    Status st = Ok{};
    if (key.empty() || value.empty()) return line.error("expected key=value");
    if (key == "avg10") {
      st = take_avg(have_avg10, out.avg10);
    } else if (key == "avg60") {
      st = take_avg(have_avg60, out.avg60);
    } else if (key == "avg300") {
      st = take_avg(have_avg300, out.avg300);
    } else if (key == "total") {
      if (have_total) return line.error("duplicate key");
      auto v = text::parse_u64(value);
      if (!v) return line.error(v.error().message);
      out.total_us = *v;
      have_total = true;
    }
    // Other keys: a later kernel's addition; ignore it rather than lose the whole resource.
    if (!st) return st.error();
  }
  if (!(have_avg10 && have_avg60 && have_avg300 && have_total)) {
    return line.error("missing avg10/avg60/avg300/total");
  }
  return out;
}

}  // namespace

Expected<PsiResource> parse_pressure(std::string_view input) {
  std::optional<PsiLine> some;
  std::optional<PsiLine> full;
  auto st = text::for_each_line(input, [&](const text::Line& line) -> Status {
    std::string_view fields = line.text;
    const std::string_view kind = text::next_token(fields);
    std::optional<PsiLine>* slot = nullptr;
    if (kind == "some") {
      slot = &some;
    } else if (kind == "full") {
      slot = &full;
    } else {
      return line.error("expected 'some' or 'full'");
    }
    if (slot->has_value()) return line.error("duplicate line");
    auto parsed = parse_psi_fields(fields, line);
    if (!parsed) return parsed.error();
    *slot = *parsed;
    return Ok{};
  });
  if (!st) return st.error();
  if (!some) return make_error("no 'some' line (empty or truncated file)");
  return PsiResource{*some, full};
}

}  // namespace memdiag
