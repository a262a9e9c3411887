// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/promise_capping.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "probes/core/cgroup_path.hpp"

namespace memdiag::analysis {
namespace {

constexpr std::size_t kNone = ~std::size_t{0};

// The innermost cgroup of `index` at or above `path` ("/a/b" -> "/a/b", "/a", "/").
std::size_t innermost_at_or_above(std::string_view path,
                                  const std::unordered_map<std::string_view, std::size_t>& index) {
  for (;;) {
    if (auto it = index.find(path); it != index.end()) return it->second;
    if (path.size() <= 1) return kNone;
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return kNone;
    path = slash == 0 ? std::string_view("/") : path.substr(0, slash);
  }
}

}  // namespace

PromiseCapping cap_promises(const std::vector<CgroupLimit>& limits, const std::vector<CgroupProcessTotals>& cgroups,
                            std::size_t max_listed) {
  PromiseCapping out;
  const std::size_t n = limits.size();
  if (n == 0) return out;
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(limits[i].path, i);

  std::vector<std::size_t> parent(n, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view above = parent_cgroup(limits[i].path);
    if (!above.empty()) parent[i] = innermost_at_or_above(above, index);
  }

  // Each cgroup's processes' promise goes to the innermost limited cgroup holding them.
  std::vector<std::uint64_t> own(n, 0), own_committed(n, 0);
  for (const CgroupProcessTotals& c : cgroups) {
    if (c.committed_private_bytes == 0 && c.unbacked_promise_bytes == 0) continue;
    const std::size_t at = innermost_at_or_above(c.cgroup, index);
    if (at == kNone) continue;
    own[at] += c.unbacked_promise_bytes;
    own_committed[at] += c.committed_private_bytes;
  }

  // Deepest first, so children are done before their parent.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto depth = [&](std::size_t i) {
    return std::count(limits[i].path.begin(), limits[i].path.end(), '/') - (limits[i].path == "/" ? 1 : 0);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth(a) > depth(b); });
  std::vector<std::uint64_t> raw(own), committed(own_committed), charged_children(n, 0), charged(n, 0);
  for (std::size_t i : order) {
    charged[i] = std::min(limits[i].headroom_bytes, own[i] + charged_children[i]);
    if (parent[i] != kNone) {
      raw[parent[i]] += raw[i];
      committed[parent[i]] += committed[i];
      charged_children[parent[i]] += charged[i];
    } else {
      out.capped_by_limits_bytes += raw[i] - charged[i];
    }
  }

  std::vector<std::size_t> over;
  for (std::size_t i = 0; i < n; ++i) {
    if (committed[i] > limits[i].effective_limit_bytes) over.push_back(i);
  }
  out.over_limit_total = over.size();
  auto excess = [&](std::size_t i) { return committed[i] - limits[i].effective_limit_bytes; };
  std::sort(over.begin(), over.end(), [&](std::size_t a, std::size_t b) {
    return excess(a) != excess(b) ? excess(a) > excess(b) : limits[a].path < limits[b].path;
  });
  if (over.size() > max_listed) over.resize(max_listed);
  for (std::size_t i : over) {
    out.over_limit.push_back(CgroupOverLimit{limits[i].path, committed[i], raw[i], limits[i].effective_limit_bytes,
                                             limits[i].headroom_bytes});
  }
  return out;
}

}  // namespace memdiag::analysis
