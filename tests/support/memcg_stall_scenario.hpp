// SPDX-License-Identifier: Apache-2.0
// A memcg-only stall in hand-made snapshots, one a second, for the model and report tests.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "probes/core/snapshot.hpp"

namespace memdiag::test {

using Clock = std::chrono::system_clock;
inline constexpr std::uint64_t kMiB = 1 << 20;
inline const Clock::time_point kStart = Clock::time_point(std::chrono::seconds(1'800'000'000));

inline Clock::time_point at(double seconds) {
  return kStart + std::chrono::milliseconds(std::lround(seconds * 1000));
}

// A memcg-only stall: /jobs has a 1 GiB limit and three children; /jobs/grower's anon grows
// 40 MiB/s from t=10; from then /jobs hits its limit (memory.events max), its PSI and the readers' PSI rise
// and the readers refault. The node itself stays calm. Until t=30, then everything stops.
struct Scenario {
  static constexpr double kGrowFrom = 10, kStopAt = 30;

  static std::shared_ptr<Snapshot> at_second(int t) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = static_cast<std::uint64_t>(t + 1);
    s->taken_at = at(t);
    const double pressed_seconds = std::clamp(t - kGrowFrom, 0.0, kStopAt - kGrowFrom);
    SystemMemory m;
    m.physical_total_bytes = 16384 * kMiB;
    m.physical_available_bytes = 12000 * kMiB;
    s->system_memory = m;
    PressureSection node_psi;
    node_psi.resources[static_cast<std::size_t>(PsiResourceKind::kMemory)] = PsiResource{};
    s->pressure = node_psi;

    CgroupSection section;
    section.mode = "v2";
    auto cgroup = [&](std::string path, bool leaf, std::uint64_t anon_mib, std::uint64_t file_mib,
                      double psi_share, std::uint64_t refaults) {
      CgroupSample c;
      c.path = std::move(path);
      c.leaf = leaf;
      c.usage_bytes = (anon_mib + file_mib) * kMiB;
      c.stat = {{"anon", anon_mib * kMiB, false},
                {"file", file_mib * kMiB, false},
                {"inactive_file", file_mib * kMiB / 2, false},
                {"shmem", 0, false},
                {"workingset_refault_file", refaults, true}};
      c.pressure = PsiResource{};
      c.pressure->some.total_us = static_cast<std::uint64_t>(psi_share * pressed_seconds * 1e6);
      c.pressure->full = PsiLine{};
      c.events[static_cast<std::size_t>(CgroupEvent::kHigh)] = 0;
      c.events[static_cast<std::size_t>(CgroupEvent::kMax)] = 0;
      c.events[static_cast<std::size_t>(CgroupEvent::kOomKill)] = 0;
      return c;
    };
    const std::uint64_t grown = static_cast<std::uint64_t>(40 * pressed_seconds);
    const std::uint64_t refaults = static_cast<std::uint64_t>(pressed_seconds * 20000);  // pages
    CgroupSample grower = cgroup("/jobs/grower", true, 100 + grown, 10, 0.05, 0);
    CgroupSample reader1 = cgroup("/jobs/reader1", true, 10, 150, 0.40, refaults);
    CgroupSample reader2 = cgroup("/jobs/reader2", true, 10, 150, 0.30, refaults / 2);
    CgroupSample jobs = cgroup("/jobs", false, 120 + grown, 310, 0.45, refaults + refaults / 2);
    jobs.limited = true;
    jobs.limit_bytes = 1024 * kMiB;
    jobs.events[static_cast<std::size_t>(CgroupEvent::kMax)] = static_cast<std::uint64_t>(pressed_seconds * 500);
    section.cgroups = {jobs, grower, reader1, reader2};
    s->cgroups = std::move(section);
    return s;
  }
};

}  // namespace memdiag::test
