#include "probes/canary/canary_source.hpp"

#include <exception>

#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/process/process_status_parser.hpp"

namespace memdiag::canary {

CanarySource::CanarySource(const KernelPaths& paths, const CanarySettings& settings)
    : paths_(paths), settings_(settings) {
  runner_options_.interval = settings_.interval;
  runner_options_.working_set_bytes = settings_.working_set_bytes;
  runner_options_.ceiling_bytes = settings_.ceiling_bytes;
  runner_options_.backoff_psi_full = settings_.backoff_psi_full;
  runner_options_.psi_path = paths.procfs + "/pressure/memory";
}

Status CanarySource::probe() {
  if (runner_) return Ok{};
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
  if (hierarchy) {
    for (const std::string& cgroup : settings_.cgroups) {
      // The daemon's own canary runs there already; a second would repeat its series.
      if (cgroup == own_cgroup_) continue;
      std::vector<std::string> dirs = {hierarchy->root + cgroup};
      cgroup_canaries_.push_back(std::make_unique<CgroupCanary>(cgroup, std::move(dirs), runner_options_));
    }
  }
  // Errors are values past this point: the runner's page or thread may be refused when the
  // node is short of memory, and the sampler must hear it as a reason, not an exception.
  try {
    auto runner = std::make_unique<CanaryRunner>(runner_options_);
    runner->start();
    runner_ = std::move(runner);
  } catch (const std::exception& e) {
    cgroup_canaries_.clear();
    return make_error(std::string("cannot start the canary: ") + e.what());
  }
  return Ok{};
}

Status CanarySource::sample(Snapshot& out) {
  CanarySection section;
  section.node_cgroup = own_cgroup_;
  section.node = runner_->reading();
  section.allocator = runner_->allocator_stats();
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
  for (const auto& e : cgroup_errors_) reasons += (reasons.empty() ? "" : "; ") + e;
  if (runner_ && !runner_->bookkeeping_locked()) {
    reasons += std::string(reasons.empty() ? "" : "; ") + "could not mlock the canary's counters or its allocator's bookkeeping (RLIMIT_MEMLOCK)";
  }
  return reasons;
}

std::unique_ptr<Source> make_canary_source(const KernelPaths& paths, const CanarySettings& settings) {
  return std::make_unique<CanarySource>(paths, settings);
}

}  // namespace memdiag::canary
