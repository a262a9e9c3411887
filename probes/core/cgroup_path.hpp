// SPDX-License-Identifier: Apache-2.0
// Cgroup paths as the cgroup source names them: relative to the hierarchy's root, "/" for the
// root itself, "/a/b" below it.
#pragma once

#include <string_view>

namespace memdiag {

// The parent of "/a/b" is "/a", of "/a" is "/"; the root ("/", or "") has none: "". So
// `for (auto at = path; !at.empty(); at = parent_cgroup(at))` walks a path and its ancestors.
inline std::string_view parent_cgroup(std::string_view path) {
  if (path.size() <= 1) return {};
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

}  // namespace memdiag
