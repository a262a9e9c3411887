// SPDX-License-Identifier: Apache-2.0
// Recording rules for the fleet view (deploy/grafana/memdiag-fleet.json): which nodes stall and
// why, which workloads press on memory across nodes, overcommit risk per node. Load beside the
// alert rules:
// rule_files: [memdiag-alerts.yml, memdiag-recording.yml]
// `promtool check rules` and `promtool test rules memdiag-recording.test.yml` pass (tests/e2e).
//
// Names are level:metric:operation, all under `memdiag:` so they never clash with what the
// daemon exports. Per-node records keep the job and instance labels; the fleet totals keep job;
// every record keeps the cluster label (_config.clusterLabel) where the targets have one, so a
// dashboard's cluster variable selects them directly.
//
// A workload's identity across nodes is the `workload` label, from the identity labels the
// daemon puts on every per-cgroup series (docs/sources.md, cgroup): `unit/<unit>` for a
// systemd unit, which has the same name on every node, else `pod/<pod_uid>` for a Kubernetes
// pod's cgroups (its containers together), else `container/<container_id>`, else the cgroup
// path itself (which is the same across nodes for cgroups made by the same tooling). memdiagd
// reads cgroup paths only, so a pod is known by its UID, which differs from one replica to the
// next; to sum replicas by their Deployment, join with kube-state-metrics' kube_pod_info
// (label uid) on pod_uid.
//
// deploy/prometheus/memdiag-recording.yml is generated from this file (deploy/mixin/build.sh).

{
  prometheusRules+:: {
    groups+: [
      {
        name: 'memdiag-fleet',
        rules: [
          // --- which nodes stall, and why ---
          // The worst stall level of the last 5 minutes: the level holds only 10 s after a stall,
          // and a fleet view looked at every minute must not miss a node that stalled for 20 s.
          {
            record: 'memdiag:node_stall_level:max5m',
            expr: 'max_over_time(memdiag_stall_level[5m])',
          },
          // Each reason that held on the node within the last 5 minutes (value 1).
          {
            record: 'memdiag:node_stall_reason:max5m',
            expr: 'max_over_time(memdiag_stall_reason[5m]) == 1',
          },
          // Nodes at medium or worse within 5 minutes (MemdiagStalling's level), and all nodes, per
          // job: 0, not nothing, when none stalls.
          {
            record: 'memdiag:nodes_stalling:count',
            expr: 'sum by (%(clusterLabel)s, job) (memdiag:node_stall_level:max5m >= bool 2)' % $._config,
          },
          {
            record: 'memdiag:nodes:count',
            expr: 'count by (%(clusterLabel)s, job) (memdiag:node_stall_level:max5m)' % $._config,
          },
          // How many nodes each reason holds on.
          {
            record: 'memdiag:nodes_by_stall_reason:count',
            expr: 'count by (%(clusterLabel)s, job, reason) (memdiag:node_stall_reason:max5m)' % $._config,
          },
          // Memory PSI per node as stall seconds per second over a minute (kind some and full).
          {
            record: 'memdiag:node_memory_pressure:rate1m',
            expr: 'sum without (resource) (rate(memdiag_pressure_stall_seconds_total{resource="memory"}[1m]))',
          },
          // Cgroup scopes at medium or worse, per node (0 when none; absent where no cgroup with a
          // limit is exported).
          {
            record: 'memdiag:node_cgroups_stalling:count',
            expr: 'sum by (%(clusterLabel)s, job, instance) (memdiag_cgroup_stall_level >= bool 2)' % $._config,
          },
          // OOM kills per node in 10 minutes (vmstat oom_kill: every kill, with or without eBPF).
          {
            record: 'memdiag:node_oom_kills:increase10m',
            expr: 'increase(memdiag_vmstat_oom_kill_total[10m])',
          },
          // Sources down per node (0 when all are up).
          {
            record: 'memdiag:node_sources_down:count',
            expr: 'sum by (%(clusterLabel)s, job, instance) (memdiag_source_up == bool 0)' % $._config,
          },
          // --- overcommit and memory per node (the names Linux and Windows share) ---
          {
            record: 'memdiag:node_overcommit_risk_level:max5m',
            expr: 'max_over_time(memdiag_overcommit_risk_level[5m])',
          },
          {
            record: 'memdiag:nodes_overcommit_risk:count',
            expr: 'sum by (%(clusterLabel)s, job) (memdiag:node_overcommit_risk_level:max5m >= bool 2)' % $._config,
          },
          {
            record: 'memdiag:node_memory_available:ratio',
            expr: 'memdiag_memory_available_bytes / memdiag_memory_total_bytes',
          },
          {
            record: 'memdiag:node_commit:ratio',
            expr: 'memdiag_commit_charge_bytes / memdiag_commit_limit_bytes',
          },
          // --- who presses on memory, by workload ---
          // Every cgroup named in a stalling scope, with its role and scope and its workload.
          {
            record: 'memdiag:cgroup_pressure_role:workload',
            expr: |||
              label_replace(label_replace(label_replace(label_replace(
                memdiag_cgroup_pressure_role == 1,
                "workload", "$1", "cgroup", "(.*)"),
                "workload", "container/$1", "container_id", "(.+)"),
                "workload", "pod/$1", "pod_uid", "(.+)"),
                "workload", "unit/$1", "unit", "(.+)")
            |||,
          },
          // Its share of its scope's pressure, and what stopping it frees, with the same labels.
          {
            record: 'memdiag:cgroup_contribution_ratio:workload',
            expr: |||
              memdiag_cgroup_contribution_ratio
                * on (%(clusterLabel)s, job, instance, cgroup) group_left (role, scope, workload) memdiag:cgroup_pressure_role:workload
            ||| % $._config,
          },
          {
            record: 'memdiag:cgroup_relief_bytes:workload',
            expr: |||
              memdiag_cgroup_relief_bytes
                * on (%(clusterLabel)s, job, instance, cgroup) group_left (role, scope, workload) memdiag:cgroup_pressure_role:workload
            ||| % $._config,
          },
          // Every cgroup judged as a scope, its stall level with its workload.
          {
            record: 'memdiag:cgroup_stall_level:workload',
            expr: |||
              label_replace(label_replace(label_replace(label_replace(
                memdiag_cgroup_stall_level,
                "workload", "$1", "cgroup", "(.*)"),
                "workload", "container/$1", "container_id", "(.+)"),
                "workload", "pod/$1", "pod_uid", "(.+)"),
                "workload", "unit/$1", "unit", "(.+)")
            |||,
          },
          // Across the fleet: on how many nodes a workload contributes (or is a victim) now, its
          // contribution summed over them (1 per node where it is all of the pressure), and what
          // stopping it everywhere would free.
          {
            record: 'memdiag:workload_nodes:count',
            expr: 'count by (%(clusterLabel)s, job, workload, role) (count by (%(clusterLabel)s, job, instance, workload, role) (memdiag:cgroup_pressure_role:workload))' % $._config,
          },
          {
            record: 'memdiag:workload_contribution_ratio:sum',
            expr: 'sum by (%(clusterLabel)s, job, workload, role) (memdiag:cgroup_contribution_ratio:workload)' % $._config,
          },
          {
            record: 'memdiag:workload_relief_bytes:sum',
            expr: 'sum by (%(clusterLabel)s, job, workload) (memdiag:cgroup_relief_bytes:workload{role="contributor"})' % $._config,
          },
          // The worst stall level of a workload's own cgroups, and on how many nodes it stalls at
          // medium or worse.
          {
            record: 'memdiag:workload_cgroup_stall_level:max',
            expr: 'max by (%(clusterLabel)s, job, workload) (memdiag:cgroup_stall_level:workload)' % $._config,
          },
          {
            record: 'memdiag:workload_stalling_nodes:count',
            expr: 'count by (%(clusterLabel)s, job, workload) (count by (%(clusterLabel)s, job, instance, workload) (memdiag:cgroup_stall_level:workload >= 2))' % $._config,
          },
        ],
      },
    ],
  },
}
