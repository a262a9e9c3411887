// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_id_map.hpp"

#include <sys/stat.h>

#include <unordered_set>

namespace memdiag {
namespace {

// Every cgroup, however deep: ids name cgroups wherever the kernel saw them stall.
CgroupDiscoveryOptions everything() {
  CgroupDiscoveryOptions options;
  options.max_depth = 32;
  return options;
}

}  // namespace

void CgroupIdMap::update(const std::string& root, std::chrono::steady_clock::time_point now) {
  if (root != root_) {
    entries_.clear();
    root_ = root;
  }
  const auto& cgroups = tree_.cgroups(root_, everything());
  if (tree_.walks() == walks_seen_) return;
  walks_seen_ = tree_.walks();

  std::unordered_set<std::uint64_t> present;
  present.reserve(cgroups.size());
  std::string dir;
  for (const auto& c : cgroups) {
    dir.assign(root_);
    if (c.path != "/") dir.append(c.path);
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0) continue;  // removed since the walk
    const std::uint64_t id = st.st_ino;
    present.insert(id);
    Entry& e = entries_[id];
    e.path = c.path;  // also after a rename
    e.removed_at = {};
  }
  for (auto& [id, e] : entries_) {
    if (!e.removed() && present.count(id) == 0) e.removed_at = now;
  }
}

const CgroupIdMap::Entry* CgroupIdMap::find(std::uint64_t id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace memdiag
