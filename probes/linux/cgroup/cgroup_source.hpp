// SPDX-License-Identifier: Apache-2.0
// Memory cgroups of the node: finds the hierarchy from the mount table (v2 unified
// with the memory controller, v1 memory, or the hybrid of v1 memory plus a cgroup2 mount that
// still tracks PSI), walks it within depth and patterns, reads every cgroup, ranks them by what
// matters (pressure, nearness to the limit, usage) and keeps the first `max_cgroups`, a quarter
// of them the largest by usage whatever their pressure (the idle holder of a stalling node).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "probes/core/kernel_paths.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/cgroup/cgroup_event_watcher.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/cgroup/cgroup_reader.hpp"
#include "probes/linux/cgroup/cgroup_tree.hpp"
#include "probes/linux/cgroup/cgroup_tree_watch.hpp"
#include "probes/linux/cgroup/oomd_mark_watcher.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"

namespace memdiag {

class CgroupSource final : public Source {
 public:
  // `options.cgroup_discovery` bounds the walk; `options.max_cgroups` caps what is exported.
  CgroupSource(const KernelPaths& paths, const CgroupOptions& options);
  std::string_view name() const override { return "cgroup"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override;

 private:
  // Switches to a hierarchy found by probe(); descriptors of another one are closed.
  void use_hierarchy(MemoryHierarchy hierarchy);

  KernelPaths paths_;
  CgroupDiscoveryOptions discovery_;
  std::size_t max_cgroups_;
  std::size_t max_watched_;
  KernelFile mountinfo_;
  MemoryHierarchy hierarchy_;
  CgroupTreeWatch tree_;
  CgroupReader reader_;
  // The reader's descriptors of each cgroup tree_ lists, in its order; looked up again only
  // after the tree was walked again.
  std::vector<CgroupReader::Files*> files_;
  static constexpr std::uint64_t kNoWalk = ~std::uint64_t{0};
  std::uint64_t files_walk_ = kNoWalk;
  std::unique_ptr<CgroupEventWatcher> watcher_;  // eventfds (v1) or inotify on memory.events (v2)
  // Userspace OOM killers' marks per exported cgroup path (oomd_marks.hpp), re-read when the
  // tree watch sees an attribute of the cgroup change, for every cgroup after a walk.
  struct OomdMarks {
    std::optional<std::uint64_t> user;
    std::optional<std::uint64_t> trusted;
  };
  std::unordered_map<std::string, OomdMarks> oomd_marks_;
  // The same marks caught as they are written, on every discovered cgroup: a killed unit's
  // cgroup is removed before the next sample reads it. Given the tree again after each walk.
  std::unique_ptr<OomdMarkWatcher> oomd_watcher_;
  std::uint64_t oomd_watch_walk_ = kNoWalk;
  std::string first_malformed_;                  // of the last sample
  std::string unwatchable_reason_;               // the watcher's, after the last sample
};

}  // namespace memdiag
