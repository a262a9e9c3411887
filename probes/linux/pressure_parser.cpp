#include "probes/linux/pressure_parser.hpp"

#include <cmath>

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

Expected<PsiLine> parse_psi_fields(std::string_view fields, std::size_t line_number,
                                   std::string_view line) {
  PsiLine out;
  bool have_avg10 = false, have_avg60 = false, have_avg300 = false, have_total = false;
  for (std::string_view token = text::next_token(fields); !token.empty();
       token = text::next_token(fields)) {
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) return text::line_error(line_number, line, "expected key=value");
    const std::string_view key = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    auto take_avg = [&](bool& seen, double& dst) -> Status {
      if (seen) return text::line_error(line_number, line, "duplicate key");
      auto v = text::parse_decimal(value);
      if (!v) return text::line_error(line_number, line, v.error().message);
      if (*v > 100.0) return text::line_error(line_number, line, "average above 100%");
      // The kernel prints percent with two decimals; dividing hundredths as integers gives the
      // nearest double (0.28 -> 0.0028, not 0.0028000000000000004).
      dst = std::round(*v * 100.0) / 10000.0;
      seen = true;
      return Ok{};
    };
    Status st = Ok{};
    if (key.empty() || value.empty()) return text::line_error(line_number, line, "expected key=value");
    if (key == "avg10") {
      st = take_avg(have_avg10, out.avg10);
    } else if (key == "avg60") {
      st = take_avg(have_avg60, out.avg60);
    } else if (key == "avg300") {
      st = take_avg(have_avg300, out.avg300);
    } else if (key == "total") {
      if (have_total) return text::line_error(line_number, line, "duplicate key");
      auto v = text::parse_u64(value);
      if (!v) return text::line_error(line_number, line, v.error().message);
      out.total_us = *v;
      have_total = true;
    }
    // Other keys: a later kernel's addition; ignore it rather than lose the whole resource.
    if (!st) return st.error();
  }
  if (!(have_avg10 && have_avg60 && have_avg300 && have_total)) {
    return text::line_error(line_number, line, "missing avg10/avg60/avg300/total");
  }
  return out;
}

}  // namespace

Expected<PsiResource> parse_pressure(std::string_view input) {
  if (auto st = text::require_final_newline(input); !st) return st.error();
  std::optional<PsiLine> some;
  std::optional<PsiLine> full;
  std::string_view rest = input;
  std::string_view line;
  std::size_t line_number = 0;
  while (text::next_line(rest, line)) {
    ++line_number;
    std::string_view fields = line;
    const std::string_view kind = text::next_token(fields);
    if (kind.empty()) continue;
    std::optional<PsiLine>* slot = nullptr;
    if (kind == "some") {
      slot = &some;
    } else if (kind == "full") {
      slot = &full;
    } else {
      return text::line_error(line_number, line, "expected 'some' or 'full'");
    }
    if (slot->has_value()) return text::line_error(line_number, line, "duplicate line");
    auto parsed = parse_psi_fields(fields, line_number, line);
    if (!parsed) return parsed.error();
    *slot = *parsed;
  }
  if (!some) return make_error("no 'some' line (empty or truncated file)");
  return PsiResource{*some, full};
}

}  // namespace memdiag
