// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/pressure_metrics.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exporters/prometheus/cgroup_labels.hpp"

namespace memdiag::prom {

namespace {

using prometheus::MetricType;

// A member's role as exported: from the innermost stalling scope it belongs to (a cgroup with a
// limit before the node), so each cgroup has one role.
struct ExportedRole {
  const ScopeMember* member = nullptr;
  std::string_view scope;  // "node" or the scope cgroup's path
  int depth = -1;          // of the scope: -1 the node, else the slashes in its path
};

}  // namespace

void render_pressure_scopes(const Snapshot& snapshot, MetricSink& sink) {
  const DerivedFigures& d = snapshot.derived;
  if (d.node_scope) {
    const ScopeAnalysis& node = *d.node_scope;
    if (node.shortfall_bytes) {
      sink.family("memdiag_shortfall_bytes",
                  "Memory the node lacks to keep diagnosis.roles.headroom_ratio of it available (MemAvailable); 0 "
                  "when it has that much.",
                  MetricType::Gauge);
      sink.sample({}, static_cast<double>(*node.shortfall_bytes));
    }
    sink.family("memdiag_short_of_memory",
                "1 when the node itself is short of memory (MemAvailable under diagnosis.roles.headroom_ratio, or "
                "kswapd or direct reclaim at work): only then is a stall the node's and are its contributors named.",
                MetricType::Gauge);
    sink.sample({}, node.short_of_memory ? 1 : 0);
    sink.family("memdiag_cgroups_at_limit",
                "Cgroup scopes stalling at their own limits this sample: their stalls show in the node's PSI but are "
                "theirs, not the node's.",
                MetricType::Gauge);
    sink.sample({}, static_cast<double>(node.cgroups_at_limit));
    if (node.exhaustion_seconds) {
      sink.family("memdiag_forecast_exhaustion_seconds",
                  "Seconds until MemAvailable reaches 0 at its trend over diagnosis.forecast.window; absent without "
                  "a clear falling trend.",
                  MetricType::Gauge);
      sink.sample({}, *node.exhaustion_seconds);
    }
  }
  if (!snapshot.cgroups) return;
  std::unordered_map<std::string_view, const CgroupSample*> by_path;
  by_path.reserve(snapshot.cgroups->cgroups.size());
  for (const CgroupSample& c : snapshot.cgroups->cgroups) by_path.emplace(c.path, &c);
  // `always`: the family is announced (HELP and TYPE) even without a cgroup with a limit, so a
  // rule or panel on it meets a known, empty family rather than an unknown name.
  const auto each_scope = [&](const char* name, const char* help, auto value, bool always = false) {
    bool started = always;
    if (always) sink.family(name, help, MetricType::Gauge);
    for (const CgroupScope& scope : d.cgroup_scopes) {
      const auto it = by_path.find(scope.cgroup);
      const std::optional<double> v = value(scope);
      if (it == by_path.end() || !v) continue;
      if (!started) sink.family(name, help, MetricType::Gauge);
      started = true;
      CgroupLabels(*it->second).emit(sink, {}, *v);
    }
  };
  each_scope("memdiag_cgroup_stall_level",
             "Is the cgroup (one with a memory limit) stalling on memory: 0 none .. 4 critical, judged like "
             "memdiag_stall_level from its own PSI, eBPF stall time, limit events, refaults and OOM kills.",
             [](const CgroupScope& s) -> std::optional<double> { return static_cast<double>(s.stall.level); }, true);
  each_scope("memdiag_cgroup_available_bytes",
             "What the cgroup can still charge: its limit (the lower of the hard limit and memory.high) less its "
             "working set (usage less inactive file cache, as the kubelet counts it).",
             [](const CgroupScope& s) -> std::optional<double> {
               if (!s.analysis.available_bytes) return std::nullopt;
               return static_cast<double>(*s.analysis.available_bytes);
             });
  each_scope("memdiag_cgroup_shortfall_bytes",
             "Memory the cgroup lacks to keep diagnosis.roles.headroom_ratio of its limit available.",
             [](const CgroupScope& s) -> std::optional<double> {
               if (!s.analysis.shortfall_bytes) return std::nullopt;
               return static_cast<double>(*s.analysis.shortfall_bytes);
             },
             true);
  each_scope("memdiag_cgroup_forecast_exhaustion_seconds",
             "Seconds until the cgroup's available memory reaches 0 at its trend over diagnosis.forecast.window; "
             "absent without a clear falling trend.",
             [](const CgroupScope& s) { return s.analysis.exhaustion_seconds; });

  // Roles: the innermost stalling scope a cgroup is a member of wins (a cgroup scope is inside
  // the node, and a deeper cgroup scope inside a shallower one), whatever order they come in.
  std::unordered_map<std::string_view, ExportedRole> roles;
  std::vector<std::string_view> order;
  const auto take = [&](const ScopeAnalysis& scope, std::string_view scope_name, int depth) {
    for (const ScopeMember& m : scope.members) {
      auto [it, fresh] = roles.try_emplace(m.cgroup, ExportedRole{&m, scope_name, depth});
      if (fresh) {
        order.push_back(m.cgroup);
      } else if (depth > it->second.depth) {
        it->second = ExportedRole{&m, scope_name, depth};
      }
    }
  };
  if (d.node_scope) take(*d.node_scope, "node", -1);
  for (const CgroupScope& scope : d.cgroup_scopes) {
    take(scope.analysis, scope.cgroup, static_cast<int>(std::count(scope.cgroup.begin(), scope.cgroup.end(), '/')));
  }
  // Announced even while no scope stalls (an empty family), like the stall level: the
  // dashboard's panels and rules on them meet a known name.
  const auto each_member = [&](const char* name, const char* help, auto emit) {
    sink.family(name, help, MetricType::Gauge);
    for (std::string_view path : order) {
      const auto it = by_path.find(path);
      if (it == by_path.end()) continue;
      CgroupLabels labels(*it->second);
      emit(labels, roles[path]);
    }
  };
  each_member("memdiag_cgroup_pressure_role",
              "1 for a cgroup named in a stalling scope (the innermost one it belongs to, label scope): a "
              "contributor holds or grows a large share of the memory reclaim cannot take back, a victim stalls or "
              "thrashes without being one.",
              [&](CgroupLabels& labels, const ExportedRole& r) {
                labels.emit(sink, {{"role", to_string(r.member->role)}, {"scope", r.scope}}, 1);
              });
  each_member("memdiag_cgroup_contribution_ratio",
              "The cgroup's share of its stalling scope's pressure: half its share of the members' anon + shmem + "
              "swap, half its share of that footprint's growth.",
              [&](CgroupLabels& labels, const ExportedRole& r) { labels.emit(sink, {}, r.member->contribution_ratio); });
  each_member("memdiag_cgroup_relief_bytes",
              "What stopping the cgroup would free for certain (its anon memory and swap); compare with the scope's "
              "shortfall.",
              [&](CgroupLabels& labels, const ExportedRole& r) {
                labels.emit(sink, {}, static_cast<double>(r.member->relief_bytes));
              });
}

}  // namespace memdiag::prom
