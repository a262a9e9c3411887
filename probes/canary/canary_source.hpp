// The canary source (issue 6): starts the daemon's canary (a cycle every interval on a thread
// of its own) and the child canaries of the configured cgroups, and puts their cumulative
// readings and the canary allocator's stats into each Snapshot. Sampling only copies counters:
// the page faults happen on the canary's thread, never in the sampler.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/canary/canary_runner.hpp"
#include "probes/canary/cgroup_canary.hpp"
#include "probes/core/kernel_paths.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/canary/canary_settings.hpp"

namespace memdiag::canary {

class CanarySource final : public Source {
 public:
  CanarySource(const KernelPaths& paths, const CanarySettings& settings);
  std::string_view name() const override { return "canary"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override;

 private:
  KernelPaths paths_;
  CanarySettings settings_;
  CanaryOptions runner_options_;
  std::unique_ptr<CanaryRunner> runner_;
  std::string own_cgroup_;  // the daemon's memory cgroup: the node canary's `cgroup` label
  std::vector<std::unique_ptr<CgroupCanary>> cgroup_canaries_;
  std::string hierarchy_problem_;
  std::vector<std::string> cgroup_errors_;
};

std::unique_ptr<Source> make_canary_source(const KernelPaths& paths, const CanarySettings& settings);

}  // namespace memdiag::canary
