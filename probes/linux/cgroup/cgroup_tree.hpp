// SPDX-License-Identifier: Apache-2.0
// Finding the memory cgroups of one hierarchy: a bounded walk of its directories. Cgroups
// that appear or vanish during the walk are normal: a directory that cannot be opened any
// more is simply not there.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace memdiag {

struct CgroupDiscoveryOptions {
  int max_depth = 6;                 // the hierarchy root is depth 0
  std::vector<std::string> include;  // glob patterns on the relative path ("*" crosses "/"); empty = all
  std::vector<std::string> exclude;  // applied after include
  std::size_t max_walk = 100000;     // directories visited at most: a runaway tree stays bounded
  bool operator==(const CgroupDiscoveryOptions&) const = default;
};

struct DiscoveredCgroup {
  std::string path;  // relative to the root, "/" for the root itself
  bool leaf;         // has no child directory at all (before any pattern)
};

// Depth-first, parents before children. `on_directory`, if given, is called with the full path
// of every directory the walk lists (selected or not), before listing it, for watching them.
std::vector<DiscoveredCgroup> discover_cgroups(const std::string& root, const CgroupDiscoveryOptions& options,
                                               const std::function<void(const std::string&)>& on_directory = {});

// Whether `path` passes the include and exclude patterns.
bool cgroup_selected(const std::string& path, const CgroupDiscoveryOptions& options);

}  // namespace memdiag
