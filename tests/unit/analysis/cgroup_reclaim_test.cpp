// SPDX-License-Identifier: Apache-2.0
// A cgroup's reclaim inefficiency (CgroupFigureTracker): 1 - pgsteal/pgscan of a v2 cgroup's
// memory.stat, and for a v1 cgroup, which has neither counter, the estimate from the kernel's
// vmpressure levels its memory.pressure_level listeners heard.
#include <gtest/gtest.h>

#include <memory>

#include "probes/analysis/cgroup_figures.hpp"

namespace memdiag {
namespace {

using Clock = std::chrono::system_clock;
const Clock::time_point kStart = Clock::time_point(std::chrono::seconds(1'800'000'000));

SnapshotPtr snapshot_at(int second, const CgroupSample& cgroup) {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = kStart + std::chrono::seconds(second);
  CgroupSection section;
  section.page_bytes = 4096;
  section.cgroups.push_back(cgroup);
  s->cgroups = std::move(section);
  return s;
}

// Each second, `scanned` and `stolen` pages (v2 memory.stat), or vmpressure events by level.
std::optional<double> inefficiency_after_10s(bool v2, double scanned, double stolen, std::array<double, 3> events) {
  analysis::CgroupFigureTracker tracker;
  std::vector<SnapshotPtr> ring;
  std::vector<analysis::CgroupFigures> figures;
  for (int t = 0; t <= 10; ++t) {
    CgroupSample c;
    c.path = "/job";
    if (v2) {
      c.stat.push_back({"pgscan", static_cast<std::uint64_t>(scanned * t), true});
      c.stat.push_back({"pgsteal", static_cast<std::uint64_t>(stolen * t), true});
    } else {
      CgroupNotifications n;
      // A listener at a level hears that level and those above.
      n.pressure = {static_cast<std::uint64_t>((events[0] + events[1] + events[2]) * t),
                    static_cast<std::uint64_t>((events[1] + events[2]) * t), static_cast<std::uint64_t>(events[2] * t)};
      c.notifications = n;
    }
    auto s = snapshot_at(t, c);
    figures = tracker.compute(*s, ring, {}, std::chrono::seconds(10));
    ring.push_back(s);
  }
  return figures.at(0).stall.reclaim_inefficiency;
}

TEST(CgroupReclaim, AV2CgroupsIsOneLessStolenOverScanned) {
  EXPECT_NEAR(*inefficiency_after_10s(true, 10000, 500, {}), 0.95, 1e-9);
  EXPECT_NEAR(*inefficiency_after_10s(true, 10000, 9000, {}), 0.10, 1e-9);
  EXPECT_EQ(*inefficiency_after_10s(true, 100, 0, {}), 0.0);  // under the 256 pages/s floor
}

TEST(CgroupReclaim, AV1CgroupsIsEstimatedFromItsVmpressureLevels) {
  // Every vmpressure window critical (4 a second: 2,048 pages scanned a second): 0.95, high.
  EXPECT_NEAR(*inefficiency_after_10s(false, 0, 0, {0, 0, 4}), 0.95, 1e-9);
  // Half medium, half low: (0.60 * 2) / 4.
  EXPECT_NEAR(*inefficiency_after_10s(false, 0, 0, {2, 2, 0}), 0.30, 1e-9);
  // One window every 4 s is 128 pages a second: under the floor.
  EXPECT_EQ(*inefficiency_after_10s(false, 0, 0, {0, 0, 0.25}), 0.0);
}

TEST(CgroupReclaim, WithNeitherCountersNorListenersThereIsNoFigure) {
  analysis::CgroupFigureTracker tracker;
  std::vector<SnapshotPtr> ring;
  CgroupSample c;
  c.path = "/job";
  auto first = snapshot_at(0, c);
  tracker.compute(*first, ring, {}, std::chrono::seconds(10));
  ring.push_back(first);
  auto second = snapshot_at(10, c);
  EXPECT_FALSE(tracker.compute(*second, ring, {}, std::chrono::seconds(10)).at(0).stall.reclaim_inefficiency);
}

}  // namespace
}  // namespace memdiag
