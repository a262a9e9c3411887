// SPDX-License-Identifier: Apache-2.0
// Cgroup ids (kernfs node ids, which are the inode numbers of the cgroup directories) to cgroup
// paths, for data that names cgroups by id: the eBPF reclaim-stall histograms. The map follows
// the tree through CgroupTreeWatch, so the directories are stat()ed again only after a cgroup
// was created, removed or renamed. A removed cgroup keeps its path (marked removed) until the
// caller forgets it: its last counts can still be exported under its name for a while.
// Ids are 64-bit and not reused while the kernel runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <iterator>
#include <string>
#include <unordered_map>

#include "probes/linux/cgroup/cgroup_tree_watch.hpp"

namespace memdiag {

class CgroupIdMap {
 public:
  struct Entry {
    std::string path;  // relative to the hierarchy root, "/" for the root
    // When the directory was found gone; time_point{} while it exists.
    std::chrono::steady_clock::time_point removed_at{};
    bool removed() const { return removed_at != std::chrono::steady_clock::time_point{}; }
  };

  // Brings the map up to date with the hierarchy mounted at `root` (walks only if it changed).
  void update(const std::string& root, std::chrono::steady_clock::time_point now);

  // nullptr if the id was never seen in the hierarchy.
  const Entry* find(std::uint64_t id) const;
  void forget(std::uint64_t id) { entries_.erase(id); }
  // Forgets every removed cgroup for which `still_needed(id)` is false.
  template <class Predicate>
  void forget_removed_unless(Predicate still_needed) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = it->second.removed() && !still_needed(it->first) ? entries_.erase(it) : std::next(it);
    }
  }

  std::size_t size() const { return entries_.size(); }
  std::uint64_t walks() const { return tree_.walks(); }

 private:
  CgroupTreeWatch tree_;
  std::uint64_t walks_seen_ = 0;
  std::string root_;
  std::unordered_map<std::uint64_t, Entry> entries_;
};

}  // namespace memdiag
