// SPDX-License-Identifier: Apache-2.0
// The list of cgroups, walked again only when the tree changed. Listing 2,000 cgroup
// directories costs ~55 ms of kernel time (kernfs lists every control file of every memory
// cgroup), a quarter of a sample, while the tree of a node changes a few times an hour. Each
// walked directory gets an inotify watch; creating, removing or renaming a cgroup is a mkdir,
// rmdir or rename through the VFS, which notifies the parent's watch, and the next sample
// walks again. Anything that makes the watch unreliable (the event queue overflowed, no watch
// could be added: fs.inotify.max_user_watches, no inotify at all) means walking every sample
// until watching works again.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "probes/linux/cgroup/cgroup_tree.hpp"

namespace memdiag {

class CgroupTreeWatch {
 public:
  CgroupTreeWatch();
  ~CgroupTreeWatch();
  CgroupTreeWatch(const CgroupTreeWatch&) = delete;
  CgroupTreeWatch& operator=(const CgroupTreeWatch&) = delete;

  // The cgroups under `root`, as discover_cgroups() finds them, from the last walk when no
  // directory changed since. Valid until the next call.
  const std::vector<DiscoveredCgroup>& cgroups(const std::string& root, const CgroupDiscoveryOptions& options);

  // How many times the tree was walked.
  std::uint64_t walks() const { return walks_; }
  // Why every sample walks ("" while watching works).
  const std::string& unwatched_reason() const { return unwatched_reason_; }
  // Whether an extended attribute of the cgroup directory `dir` (as walked: root + path) may
  // have changed since the last call of cgroups(): true while watching does not work, and for
  // every directory when that call walked (a new walk's directories were not watched before).
  bool attributes_may_have_changed(const std::string& dir, std::uint64_t walks_before) const {
    return inotify_fd_ < 0 || !unwatched_reason_.empty() || walks_ != walks_before ||
           attributes_changed_.count(dir) > 0;
  }

 private:
  // Reads every pending event; true if the tree may have changed.
  bool drain_events();
  void watch_directory(const std::string& dir);
  void forget_watches();

  int inotify_fd_ = -1;
  bool stale_ = true;  // walk at the next call
  std::string root_;
  CgroupDiscoveryOptions options_;
  std::vector<DiscoveredCgroup> cgroups_;
  std::unordered_map<int, std::string> watch_paths_;  // descriptor -> directory
  std::unordered_set<int> seen_in_walk_;              // descriptors the current walk added
  std::unordered_set<std::string> attributes_changed_;  // directories with IN_ATTRIB since the last call
  std::uint64_t walks_ = 0;
  std::string unwatched_reason_;
};

}  // namespace memdiag
