// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"

#include <vector>

#include "probes/linux/cgroup/mountinfo_parser.hpp"

namespace memdiag {
namespace {

bool lists_word(std::string_view text, std::string_view word) {
  std::size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string_view::npos) {
    const bool starts = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == '\n';
    const std::size_t end = pos + word.size();
    const bool ends = end == text.size() || text[end] == ' ' || text[end] == '\n';
    if (starts && ends) return true;
    pos = end;
  }
  return false;
}

std::string host_path(const KernelPaths& paths, const std::string& mount_point) {
  if (mount_point == "/sys" || mount_point.rfind("/sys/", 0) == 0) return paths.sysfs + mount_point.substr(4);
  return mount_point;
}

std::string prefix_of(const std::string& mount_root) { return mount_root == "/" ? "" : mount_root; }

}  // namespace

Expected<MemoryHierarchy> find_memory_hierarchy(const KernelPaths& paths, KernelFile& mountinfo) {
  auto text = mountinfo.read();
  if (!text) return text.error();
  std::vector<MountEntry> mounts;
  if (auto st = parse_mountinfo(*text, mounts); !st) return make_error(mountinfo.path() + ": " + st.error().message);
  const CgroupMounts found = find_cgroup_mounts(mounts);
  MemoryHierarchy h;
  if (!found.v2.empty()) {
    std::string buffer;
    auto controllers = read_file_once(host_path(paths, found.v2) + "/cgroup.controllers", buffer);
    if (controllers && lists_word(*controllers, "memory")) {
      h.version = CgroupVersion::kV2;
      h.mode = "v2";
      h.root = host_path(paths, found.v2);
      h.root_in_hierarchy = prefix_of(found.v2_root);
      return h;
    }
  }
  if (!found.v1_memory.empty()) {
    h.version = CgroupVersion::kV1;
    h.root = host_path(paths, found.v1_memory);
    h.psi_root = found.v2.empty() ? "" : host_path(paths, found.v2);
    h.mode = h.psi_root.empty() ? "v1" : "hybrid";
    h.root_in_hierarchy = prefix_of(found.v1_memory_root);
    return h;
  }
  return make_error("no memory cgroup hierarchy in " + mountinfo.path() +
                    " (neither cgroup2 with the memory controller nor a cgroup v1 memory mount)");
}

}  // namespace memdiag
