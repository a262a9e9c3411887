// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_tree.hpp"

#include <dirent.h>
#include <fnmatch.h>

#include <cstring>

namespace memdiag {

bool cgroup_selected(const std::string& path, const CgroupDiscoveryOptions& options) {
  auto matches = [&path](const std::string& pattern) { return ::fnmatch(pattern.c_str(), path.c_str(), 0) == 0; };
  bool included = options.include.empty();
  for (const auto& p : options.include) included = included || matches(p);
  if (!included) return false;
  for (const auto& p : options.exclude) {
    if (matches(p)) return false;
  }
  return true;
}

namespace {

struct Walk {
  const std::string& root;
  const CgroupDiscoveryOptions& options;
  std::vector<DiscoveredCgroup>& out;
  const std::function<void(const std::string&)>& on_directory;
  std::size_t visited = 0;

  void visit(const std::string& relative, int depth) {
    if (++visited > options.max_walk) return;
    const std::string dir_path = relative == "/" ? root : root + relative;
    // Before listing, so that a child created meanwhile is either listed or announced.
    if (on_directory) on_directory(dir_path);
    DIR* dir = ::opendir(dir_path.c_str());
    if (dir == nullptr) return;  // vanished between listing and opening
    std::vector<std::string> children;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_type != DT_DIR) continue;  // cgroupfs and kernfs always fill d_type
      if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
      children.emplace_back(entry->d_name);
    }
    ::closedir(dir);
    if (cgroup_selected(relative, options)) out.push_back(DiscoveredCgroup{relative, children.empty()});
    if (depth >= options.max_depth) return;
    for (const auto& child : children) visit(relative == "/" ? "/" + child : relative + "/" + child, depth + 1);
  }
};

}  // namespace

std::vector<DiscoveredCgroup> discover_cgroups(const std::string& root, const CgroupDiscoveryOptions& options,
                                               const std::function<void(const std::string&)>& on_directory) {
  std::vector<DiscoveredCgroup> out;
  Walk{root, options, out, on_directory}.visit("/", 0);
  return out;
}

}  // namespace memdiag
