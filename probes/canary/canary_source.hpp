// SPDX-License-Identifier: Apache-2.0
// The canary source: starts the daemon's canary and the canaries of the configured
// cgroups, each a child process (canary_child.hpp; the daemon's own stays in the daemon's
// cgroup), and puts their cumulative readings and the daemon's canary allocator's stats into
// each Snapshot. Sampling only copies the latest report each child sent: the page faults happen
// in the children, never in the daemon.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/canary/canary_child.hpp"
#include "probes/canary/canary_child_main.hpp"
#include "probes/canary/canary_settings.hpp"
#include "probes/canary/cgroup_canary.hpp"
#include "probes/core/kernel_paths.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag::canary {

class CanarySource final : public Source {
 public:
  // program: the binary with the --canary-child mode; canary_child_program() by default, which
  // only memdiagd sets (probe() refuses to start without one).
  CanarySource(const KernelPaths& paths, const CanarySettings& settings, std::string program = canary_child_program());
  std::string_view name() const override { return "canary"; }
  Status probe() override;
  Status sample(Snapshot& out) override;
  std::string degraded() const override;

  // The daemon's canary child's pid, -1 while none runs (tests: the same child across reloads).
  pid_t node_child_pid() const { return node_pid_; }

 private:
  KernelPaths paths_;
  CanarySettings settings_;
  std::string program_;
  CanaryOptions runner_options_;
  std::unique_ptr<CanaryChild> node_;  // the daemon's own canary
  std::string own_cgroup_;  // the daemon's memory cgroup: the node canary's `cgroup` label
  std::vector<std::unique_ptr<CgroupCanary>> cgroup_canaries_;
  std::string hierarchy_problem_;
  // What the last sample found: why the daemon's canary child does not run, whether its
  // bookkeeping is unlocked, and the cgroup canaries' errors.
  std::string node_error_;
  bool node_unlocked_ = false;
  pid_t node_pid_ = -1;
  std::vector<std::string> cgroup_errors_;
};

std::unique_ptr<Source> make_canary_source(const KernelPaths& paths, const CanarySettings& settings);

}  // namespace memdiag::canary
