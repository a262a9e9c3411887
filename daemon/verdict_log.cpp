#include "daemon/verdict_log.hpp"

#include <fmt/format.h>

namespace memdiag {

std::string describe_stall_transition(VerdictLevel from, const StallVerdict& to) {
  std::string line = fmt::format("stall level {} -> {}:", to_string(from), to_string(to.level));
  if (to.level != to.instant_level) {
    line += fmt::format(" now={} (held for the hysteresis)", to_string(to.instant_level));
  }
  for (const VerdictReason& r : to.reasons) {
    line += fmt::format(" {}={:.3g}(>={:.3g},{})", r.code, r.value, r.threshold, to_string(r.level));
  }
  line += " signals=";
  for (std::size_t i = 0; i < to.signals.size(); ++i) line += fmt::format("{}{}", i ? "," : "", to.signals[i]);
  line += fmt::format(" window={:.1f}s", to.figures.window_seconds);
  return line;
}

}  // namespace memdiag
