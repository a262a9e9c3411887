// SPDX-License-Identifier: Apache-2.0
// The cgroup source's options (`sources.cgroup` in the config).
#pragma once

#include <cstddef>

#include "probes/linux/cgroup/cgroup_tree.hpp"

namespace memdiag {

struct CgroupOptions {
  // How far and what to walk.
  CgroupDiscoveryOptions cgroup_discovery;
  // How many cgroups to export at most (most important first); the rest are counted as dropped.
  std::size_t max_cgroups = 100;  // the series budget: docs/operations.md "Series per node"
  // v1: how many of the exported cgroups (most important first) get pressure_level and OOM
  // eventfds: four descriptors each.
  std::size_t max_watched_cgroups = 50;
  bool operator==(const CgroupOptions&) const = default;
};

}  // namespace memdiag
