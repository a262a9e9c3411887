// SPDX-License-Identifier: Apache-2.0
#include "exporters/report/status_line.hpp"

namespace memdiag::report {
namespace {

// "high (hard_faults)", or "none"; a level without reasons (held after they passed) alone.
std::string level_with_reason(VerdictLevel level, const std::vector<VerdictReason>& reasons) {
  std::string out(to_string(level));
  if (level != VerdictLevel::kNone && !reasons.empty()) out += " (" + std::string(reasons.front().code) + ")";
  return out;
}

}  // namespace

std::string status_line(const Snapshot& snapshot) {
  const DerivedFigures& d = snapshot.derived;
  std::string out = "stall " + (d.stall ? level_with_reason(d.stall->level, d.stall->reasons) : std::string("unknown"));
  if (d.overcommit) out += "; overcommit " + level_with_reason(d.overcommit->level, d.overcommit->reasons);
  if (d.breaking) {
    out += "; breaking " + std::string(to_string(d.breaking->level));
    if (!d.breaking->items.empty()) out += " (" + d.breaking->items.front().subject + ")";
  }
  std::size_t up = 0;
  std::string down;
  for (const SourceStatus& s : snapshot.sources) {
    if (s.up) {
      ++up;
    } else {
      down += (down.empty() ? "" : ", ") + s.name;
    }
  }
  out += "; " + std::to_string(up) + "/" + std::to_string(snapshot.sources.size()) + " sources up";
  if (!down.empty()) out += " (not up: " + down + ")";
  return out;
}

}  // namespace memdiag::report
