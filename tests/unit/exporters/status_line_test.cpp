// SPDX-License-Identifier: Apache-2.0
// The one-line status a service manager shows (systemd's STATUS=): the levels with their first
// reason, and the sources up, naming those that are not.
#include "exporters/report/status_line.hpp"

#include <gtest/gtest.h>

namespace memdiag::report {
namespace {

Snapshot with_sources(std::initializer_list<std::pair<const char*, bool>> sources) {
  Snapshot s;
  for (const auto& [name, up] : sources) s.sources.push_back({name, up, 0.001, up ? "" : "down"});
  return s;
}

TEST(StatusLine, CalmNodeAllSourcesUp) {
  Snapshot s = with_sources({{"meminfo", true}, {"vmstat", true}});
  s.derived.stall = StallVerdict{};
  OvercommitVerdict o;
  s.derived.overcommit = o;
  EXPECT_EQ(status_line(s), "stall none; overcommit none; 2/2 sources up");
}

TEST(StatusLine, LevelsCarryTheirFirstReasonAndSourcesNotUpAreNamed) {
  Snapshot s = with_sources({{"meminfo", true}, {"reclaim_stall", false}, {"canary", false}});
  StallVerdict stall;
  stall.level = VerdictLevel::kHigh;
  stall.reasons = {VerdictReason{stall_reason::kStallTime, 0.4, 0.3, VerdictLevel::kHigh},
                   VerdictReason{stall_reason::kDirectReclaim, 0.2, 0.1, VerdictLevel::kMedium}};
  s.derived.stall = stall;
  OvercommitVerdict o;
  o.level = VerdictLevel::kLow;
  o.reasons = {VerdictReason{overcommit_reason::kUnbackedPromises, 0.6, 0.5, VerdictLevel::kLow}};
  s.derived.overcommit = o;
  EXPECT_EQ(status_line(s),
            "stall high (stall_time); overcommit low (unbacked_promises); 1/3 sources up (not up: reclaim_stall, canary)");
}

TEST(StatusLine, AHeldLevelWithoutReasonsAndNoVerdictYet) {
  Snapshot s = with_sources({});
  EXPECT_EQ(status_line(s), "stall unknown; 0/0 sources up");
  StallVerdict held;
  held.level = VerdictLevel::kMedium;  // held after its reasons passed
  s.derived.stall = held;
  EXPECT_EQ(status_line(s), "stall medium; 0/0 sources up");
}

}  // namespace
}  // namespace memdiag::report
