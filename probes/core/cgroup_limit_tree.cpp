// SPDX-License-Identifier: Apache-2.0
#include "probes/core/cgroup_limit_tree.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

namespace memdiag {
namespace {

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > kUnbounded - b ? kUnbounded : a + b; }

std::size_t depth_of(std::string_view path) {
  if (path == "/") return 0;
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

}  // namespace

CgroupLimitTree build_limit_tree(const std::vector<CgroupLimitInput>& cgroups, std::size_t max_limits) {
  const std::size_t n = cgroups.size();
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(cgroups[i].path, i);

  // The nearest discovered ancestor (discovery may skip levels: depth limits, patterns).
  constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::size_t> parent(n, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view p = cgroups[i].path;
    while (p.size() > 1) {
      const std::size_t slash = p.rfind('/');
      p = slash == 0 ? std::string_view("/") : p.substr(0, slash);
      if (auto it = index.find(p); it != index.end() && it->second != i) {
        parent[i] = it->second;
        break;
      }
    }
  }

  // Shallowest first: every parent before its children (top-down), reversed for bottom-up.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::size_t> depth(n);
  for (std::size_t i = 0; i < n; ++i) depth[i] = depth_of(cgroups[i].path);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return depth[a] != depth[b] ? depth[a] < depth[b] : cgroups[a].path < cgroups[b].path;
  });

  std::vector<std::uint64_t> effective(n, kUnbounded), headroom(n, kUnbounded);
  for (std::size_t i : order) {
    const CgroupLimitInput& c = cgroups[i];
    std::uint64_t own_headroom = kUnbounded;
    if (c.limit_bytes) {
      const std::uint64_t usage = c.usage_bytes.value_or(0);
      own_headroom = *c.limit_bytes > usage ? *c.limit_bytes - usage : 0;
    }
    effective[i] = c.limit_bytes.value_or(kUnbounded);
    headroom[i] = own_headroom;
    if (parent[i] != kNone) {
      effective[i] = std::min(effective[i], effective[parent[i]]);
      headroom[i] = std::min(headroom[i], headroom[parent[i]]);
    }
  }

  CgroupLimitTree tree;
  std::vector<std::uint64_t> children_sum(n, 0);
  std::vector<bool> has_child(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    if (parent[i] != kNone) has_child[parent[i]] = true;
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const std::size_t i = *it;
    const CgroupLimitInput& c = cgroups[i];
    std::uint64_t counted;
    if (has_child[i]) {
      counted = children_sum[i];
    } else {
      // An unlimited leaf: unbounded under a limit (which caps it), nothing elsewhere.
      counted = effective[i] != kUnbounded ? kUnbounded : 0;
    }
    if (c.limit_bytes) counted = std::min(counted, *c.limit_bytes);
    if (parent[i] != kNone) {
      children_sum[parent[i]] = saturating_add(children_sum[parent[i]], counted);
    } else {
      // Only an unlimited top reaches here unbounded if a child of it is unbounded; that child
      // has no limit above it either, so it counted 0: `counted` is finite.
      tree.effective_limits_sum_bytes = saturating_add(tree.effective_limits_sum_bytes, counted);
    }
  }

  for (std::size_t i : order) {
    const CgroupLimitInput& c = cgroups[i];
    if (!c.limit_bytes) continue;
    if (tree.limits.size() >= max_limits) {
      ++tree.limits_dropped;
      continue;
    }
    tree.limits.push_back(CgroupLimit{std::string(c.path), *c.limit_bytes, c.usage_bytes.value_or(0), effective[i],
                                      headroom[i]});
  }
  std::sort(tree.limits.begin(), tree.limits.end(),
            [](const CgroupLimit& a, const CgroupLimit& b) { return a.path < b.path; });
  return tree;
}

}  // namespace memdiag
