// SPDX-License-Identifier: Apache-2.0
// The eBPF reclaim-stall source: loads the probe once, reads its histograms every
// sample, names the cgroups (ids are the inode numbers of the memory hierarchy's directories)
// and keeps the most stalled ones within the cap. A cgroup removed for longer than
// `retain_removed` is forgotten in the kernel maps and its counts folded into the node totals,
// so the maps stay small and the node totals never go backwards.
//
// When the probe cannot load (no BTF, no CAP_BPF/CAP_PERFMON, no tracepoint at all), probe()
// says why; it tries again at most once a minute, since loading costs tens of milliseconds and
// such reasons rarely go away by themselves. A kind whose tracepoints this kernel lacks is not
// traced while the others are: degraded() names it with its reason.
//
// What is done with a reading (naming, cap, retention, folding) is StallAttribution's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "probes/bpf/bpf_factories.hpp"
#include "probes/bpf/reclaim_stall_probe.hpp"
#include "probes/bpf/stall_attribution.hpp"
#include "probes/core/kernel_paths.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/cgroup/cgroup_id_map.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/bpf/reclaim_stall_options.hpp"

namespace memdiag {

class ReclaimStallSource final : public Source {
 public:
  static constexpr std::chrono::seconds kRetryLoadAfter{60};

  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `now` is the steady clock; tests pass one they move by hand.
  ReclaimStallSource(const KernelPaths& paths, const ReclaimStallOptions& options,
                     Clock now = std::chrono::steady_clock::now);
  std::string_view name() const override { return "reclaim_stall"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override { return degraded_; }
  // How many times loading the probe was tried: at most one more per kRetryLoadAfter.
  std::uint64_t load_attempts() const { return load_attempts_; }

 private:
  KernelPaths paths_;
  ReclaimStallOptions options_;
  KernelFile mountinfo_;
  std::optional<MemoryHierarchy> hierarchy_;  // none: only node totals
  CgroupIdMap ids_;
  std::unique_ptr<ReclaimStallProbe> probe_;
  StallAttribution attribution_;
  Clock now_;
  std::optional<Error> load_failure_;
  std::chrono::steady_clock::time_point load_failed_at_;
  std::uint64_t load_attempts_ = 0;
  std::string degraded_;
};

}  // namespace memdiag
