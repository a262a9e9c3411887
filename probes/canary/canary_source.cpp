// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_source.hpp"

#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/process/process_status_parser.hpp"

namespace memdiag::canary {

CanarySource::CanarySource(const KernelPaths& paths, const CanarySettings& settings, std::string program)
    : paths_(paths), settings_(settings), program_(std::move(program)) {
  runner_options_.interval = settings_.interval;
  runner_options_.working_set_bytes = settings_.working_set_bytes;
  runner_options_.ceiling_bytes = settings_.ceiling_bytes;
  runner_options_.backoff_psi_full = settings_.backoff_psi_full;
  runner_options_.psi_path = paths.procfs + "/pressure/memory";
}

Status CanarySource::probe() {
  if (node_) return Ok{};
  if (program_.empty()) {
    return make_error("this program has no --canary-child mode to run canaries in (memdiagd has)");
  }
  KernelFile mountinfo(paths_.procfs + "/self/mountinfo");
  auto hierarchy = find_memory_hierarchy(paths_, mountinfo);
  const CgroupVersion version = hierarchy ? hierarchy->version : CgroupVersion::kV2;
  std::string buffer;
  if (auto own = read_file_once(paths_.procfs + "/self/cgroup", buffer)) {
    if (auto path = memory_cgroup_of(*own, version)) own_cgroup_ = std::string(*path);
  }
  if (!hierarchy && !settings_.cgroups.empty()) {
    hierarchy_problem_ = "no canaries in cgroups: " + hierarchy.error().message;
  }
  CanaryOptions node_options = runner_options_;
  if (hierarchy && !own_cgroup_.empty()) {
    // The daemon's canary shares the daemon's cgroup: it looks at that cgroup's headroom before
    // a cycle, so it never pushes the daemon into reclaim and throttling at its own limit. The
    // canaries in `cgroups:` are there to meet their cgroup's limit, and do not.
    node_options.cgroup_dir = own_cgroup_ == "/" ? hierarchy->root : hierarchy->root + own_cgroup_;
    node_options.cgroup_root = hierarchy->root;
    node_options.cgroup_v2 = hierarchy->version == CgroupVersion::kV2;
  }
  if (hierarchy) {
    for (const std::string& cgroup : settings_.cgroups) {
      // The daemon's own canary runs there already; a second would repeat its series.
      if (cgroup == own_cgroup_) continue;
      std::vector<std::string> dirs = {hierarchy->root + cgroup};
      cgroup_canaries_.push_back(std::make_unique<CgroupCanary>(cgroup, std::move(dirs), runner_options_, program_,
                                                                settings_.restart_after));
    }
  }
  // No cgroup to join: the child stays in the daemon's, which is what its `cgroup` label says.
  node_ = std::make_unique<CanaryChild>(node_options, program_, std::vector<std::string>{}, settings_.restart_after);
  return Ok{};
}

Status CanarySource::sample(Snapshot& out) {
  CanarySection section;
  section.node_cgroup = own_cgroup_;
  CanaryChildStatus node = node_->poll();
  section.node = node.report.reading;
  section.allocator = node.report.allocator;
  section.node_running = node.running;
  node_error_ = std::move(node.error);
  node_unlocked_ = node.reported && !node.report.bookkeeping_locked;
  node_pid_ = node.pid;
  cgroup_errors_.clear();
  for (auto& canary : cgroup_canaries_) {
    section.cgroups.push_back(canary->poll());
    if (!section.cgroups.back().error.empty()) {
      cgroup_errors_.push_back(section.cgroups.back().cgroup + ": " + section.cgroups.back().error);
    }
  }
  out.canary = std::move(section);
  return Ok{};
}

std::string CanarySource::degraded() const {
  std::string reasons = hierarchy_problem_;
  auto add = [&reasons](const std::string& reason) { reasons += (reasons.empty() ? "" : "; ") + reason; };
  if (!node_error_.empty()) add("the daemon's canary: " + node_error_);
  for (const auto& e : cgroup_errors_) add(e);
  if (node_unlocked_) {
    add("could not mlock the canary child's counters or its allocator's bookkeeping (RLIMIT_MEMLOCK)");
  }
  return reasons;
}

std::unique_ptr<Source> make_canary_source(const KernelPaths& paths, const CanarySettings& settings) {
  return std::make_unique<CanarySource>(paths, settings);
}

}  // namespace memdiag::canary
