// SPDX-License-Identifier: Apache-2.0
// Alert rules on memdiagd's metrics. Each names the stall or the wall, its cause and who.
// `promtool check rules` and `promtool test rules deploy/prometheus/memdiag-alerts.test.yml` pass: each
// alert fires on the series that should fire it, stays quiet beside it, and resolves when the
// series go back to normal.
//
// The verdict alerts (memdiag_stall_level, memdiag_overcommit_risk_level) carry the reasons as a
// label: their expression joins the level with each reason seen in the last 5 minutes, so
// there is one alert per (node, reason) and the annotations say why without a query in the
// template (templates that query Prometheus run at every notification and fail quietly).
// Alertmanager's grouping by instance brings the reasons of one node together. Where no reason
// is exported (an older daemon) the level alone still alerts, without a reason label.
//
// Levels overlap (a node at critical also holds the high and medium alerts); to page once,
// inhibit in Alertmanager, e.g.:
//   inhibit_rules:
//     - source_matchers: [alertname="MemdiagStallingCritical"]
//       target_matchers: [alertname=~"MemdiagStalling|MemdiagStallingHigh"]
//       equal: [instance]
//     - source_matchers: [alertname="MemdiagStallingHigh"]
//       target_matchers: [alertname="MemdiagStalling"]
//       equal: [instance]
//     - source_matchers: [alertname="MemdiagOvercommitRiskHigh"]
//       target_matchers: [alertname="MemdiagOvercommitRisk"]
//       equal: [instance]
// Thresholds are set against what systemd-oomd, oomd, lmkd, psi-notify and the kubelet do
// (docs/diagnosis.md has their figures beside ours); each rule's comment says which.
//
// The alerting rules of the mixin; deploy/prometheus/memdiag-alerts.yml is generated from it
// (deploy/mixin/build.sh).
local stallReasons = '{{ if eq $labels.reason "stall_time" }}Tasks wait for memory a large share of the time (PSI).{{ else if eq $labels.reason "direct_reclaim" }}Allocations reclaim memory themselves node-wide: the node is short of free memory (look at the overcommit picture).{{ else if eq $labels.reason "memcg_limit" }}Tasks reclaim at their cgroup\'s limit: memdiag_cgroup_stall_level and memdiag_cgroup_memory_fill_ratio say which cgroups.{{ else if eq $labels.reason "compaction" }}Allocations wait to compact memory into larger pages: fragmentation (transparent huge pages, network buffers).{{ else if eq $labels.reason "thrashing" }}File pages are evicted and read back at once: the working set does not fit.{{ else if eq $labels.reason "oom_kill" }}The OOM killer ran.{{ else if eq $labels.reason "swap_exhausted" }}Swap is nearly full while tasks stall.{{ else if eq $labels.reason "slow_faults" }}The canary\'s page faults take several times their calm time.{{ else if eq $labels.reason "hard_faults" }}Pages come back from the page file faster than 1 MiB/s (Windows).{{ else if eq $labels.reason "low_memory" }}Windows\'s low-memory notification is signaled: working sets are being trimmed.{{ else }}memdiag_stall_reason says why.{{ end }} `memdiagd diagnose` on {{ $labels.instance }} (or its status page) names the contributors and victims, the evidence and what to do; memdiag_stall_evidence has the figures.';
local overcommitReasons = '{{ if eq $labels.reason "unbacked_promises" }}Memory promised, not yet backed and able to come due on the node (what cgroup limits cap and copy-on-write sharing left out) exceeds what can still be supplied (MemAvailable + SwapFree): the promises come due as reclaim and OOM kills.{{ else if eq $labels.reason "overcommit_always" }}vm.overcommit_memory=1: nothing refuses new promises.{{ else if eq $labels.reason "commit_limit" }}The commit charge is near the commit limit: new allocations will fail (vm.overcommit_memory=2, or Windows; enlarge swap or the page files, or stop the largest holder).{{ else if eq $labels.reason "cgroup_limits" }}Cgroup limits, each capped subtree counted once, add up past the node\'s memory: they cannot all be met at once.{{ else }}memdiag_overcommit_risk_reason says why.{{ end }} memdiag_overcommit_charged_unbacked_bytes against memdiag_overcommit_supply_bytes is the size of it; memdiag_process_unbacked_promise_bytes names the largest promise holders; memdiag_overcommit_cgroup_unbacked_bytes names cgroups promised beyond their own limits (their own risk: an OOM kill at their ceiling).';

{
  prometheusAlerts+:: {
    groups+: [{
      name: 'memdiag',
      rules: [
        // The 24-byte ENOMEM: at vm.max_map_count, mmap and even munmap fail whatever the free memory.
        {
          alert: 'MemdiagProcessNearMaxMapCount',
          expr: 'memdiag_process_map_areas_above_threshold >= 0.9',
          'for': '2m',
          labels: { severity: 'critical' },
          annotations: {
            runbook_url: $._config.runbookURL('map-count', 'MemdiagProcessNearMaxMapCount'),
            summary: '{{ $labels.comm }} (pid {{ $labels.pid }}) has {{ $value | humanizePercentage }} of vm.max_map_count mappings',
            description: 'Allocations in this process will fail with ENOMEM at 100% whatever the free memory. Look for an allocator that munmaps pieces of mappings, or raise vm.max_map_count.',
          },
        },
        // The warning before the critical one above, node-wide: some process holds 80 % of
        // vm.max_map_count, the daemon's default map_areas_threshold, from which that process
        // gets its own memdiag_process_map_areas_above_threshold series (who it is). No tool
        // in docs/diagnosis.md watches this at all (node_exporter #3366 asks for the sysctl), so the
        // bound is ours: 20 % of the default 65530 is 13,000 mappings of room, hours for a
        // leak of a few a second. 10 minutes: a build's short peak is not worth a page.
        {
          alert: 'MemdiagMapCountHeadroomLow',
          expr: 'memdiag_map_areas_ratio_max >= 0.8',
          'for': '10m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('map-count', 'MemdiagMapCountHeadroomLow'),
            summary: 'A process on {{ $labels.instance }} holds {{ $value | humanizePercentage }} of vm.max_map_count mappings',
            description: 'At 100% its mmap and munmap fail with ENOMEM whatever the free memory. memdiag_process_map_areas_above_threshold{instance="{{ $labels.instance }}"} names it; raise vm.max_map_count or fix the allocator that fragments its mappings.',
          },
        },
        // Training jobs frozen for hours: tasks stuck in global direct reclaim.
        {
          alert: 'MemdiagDirectReclaimStalls',
          expr: 'sum by (instance) (rate(memdiag_reclaim_stall_node_seconds_sum{kind="direct"}[5m])) > 0.1',
          'for': '5m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagDirectReclaimStalls'),
            summary: 'Tasks on {{ $labels.instance }} spend {{ $value | humanize }} s per second in direct reclaim',
            description: 'Page allocations wait for reclaim node-wide. Check memdiag_meminfo_committed_as_bytes against RAM (overcommit) and memdiag_reclaim_stall_seconds by cgroup for who stalls.',
          },
        },
        {
          alert: 'MemdiagMemoryPressureFull',
          expr: 'memdiag_pressure_ratio{resource="memory",kind="full",window="60s"} > 0.1',
          'for': '5m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagMemoryPressureFull'),
            summary: 'All non-idle tasks on {{ $labels.instance }} stalled on memory {{ $value | humanizePercentage }} of the time',
            description: 'PSI full: for that share of the last minute no task on {{ $labels.instance }} made progress because all waited for memory; the node is losing work outright. `memdiagd diagnose` on {{ $labels.instance }} says whose stall it is and who contributes.',
          },
        },
        // Promises that cannot all be paid: Committed_AS far beyond RAM with the heuristic or
        // "always" overcommit modes, which never refuse them. Only what can come due counts:
        // the commit less what cgroup limits cap and copy-on-write sharing (unbacked minus
        // charged unbacked); from a daemon without those figures, Committed_AS as it is.
        {
          alert: 'MemdiagOvercommitDue',
          expr: |||
            (
              memdiag_meminfo_committed_as_bytes
                - on (job, instance) (memdiag_overcommit_unbacked_bytes - memdiag_overcommit_charged_unbacked_bytes)
              or memdiag_meminfo_committed_as_bytes
            ) / on (job, instance) memdiag_meminfo_mem_total_bytes > 1.5
            and on (instance) memdiag_vm_sysctl{name="overcommit_memory"} != 2
          |||,
          'for': '15m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('overcommit', 'MemdiagOvercommitDue'),
            summary: '{{ $labels.instance }} has promised {{ $value | humanize }}x its RAM',
            description: 'If the promises come due together every page fault goes into direct reclaim. Consider vm.overcommit_memory=2 or lower job memory requests.',
          },
        },
        // The stall verdict (docs/verdicts.md "Stall verdict"): medium or worse (PSI some >= 10 % of the
        // time, psi-notify's default warning, or full >= 5 %). Stalls come and go: a job that
        // stalls for 30 s every minute never holds an instant level through a `for`, so the
        // level is read as its highest over the last 2 minutes, and the alert fires once that
        // has stayed at medium or worse for 4: a stall that keeps coming back within 2 minutes,
        // or one that lasted 2 minutes. One alert per reason seen in the last 5 minutes.
        {
          alert: 'MemdiagStalling',
          expr: |||
            (max_over_time(memdiag_stall_level[%(stallWindow)s]) >= 2) * on (job, instance) group_right () (max_over_time(memdiag_stall_reason[5m]) == 1)
            or on (job, instance) max_over_time(memdiag_stall_level[%(stallWindow)s]) >= 2
          ||| % $._config,
          'for': '4m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagStalling'),
            summary: '{{ $labels.instance }} is stalling on memory (level {{ $value }} of 4){{ with $labels.reason }}: {{ . }}{{ end }}',
            description: stallReasons,
          },
        },
        // High (PSI some >= 30 % or full >= 20 %), recurring within 2 minutes for 5 minutes
        // (or one stall of 3): tasks on the node lose a third of their time, for as long as the
        // kubelet's pressure transition period (5 min), which is how long it takes to call a
        // node's memory pressure over. Critical: a node in that state for 5 minutes needs a
        // person, not another minute of waiting.
        {
          alert: 'MemdiagStallingHigh',
          expr: |||
            (max_over_time(memdiag_stall_level[%(stallWindow)s]) >= 3) * on (job, instance) group_right () (max_over_time(memdiag_stall_reason[5m]) == 1)
            or on (job, instance) max_over_time(memdiag_stall_level[%(stallWindow)s]) >= 3
          ||| % $._config,
          'for': '5m',
          labels: { severity: 'critical' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagStallingHigh'),
            summary: '{{ $labels.instance }} has stalled on memory at level {{ $value }} of 4 for 5 minutes{{ with $labels.reason }}: {{ . }}{{ end }}',
            description: stallReasons,
          },
        },
        // Critical (PSI some or full >= 60 %): systemd-oomd kills at memory full avg10 60 % held
        // 30 s (DefaultMemoryPressureDurationSec), lmkd calls full 70 % of a second critical.
        // At this level something is about to be killed: critical again within a minute, for 2
        // minutes (or one stall of a minute, one past oomd's 30 s), says it is not a blip.
        {
          alert: 'MemdiagStallingCritical',
          expr: |||
            (max_over_time(memdiag_stall_level[%(stallCriticalWindow)s]) >= 4) * on (job, instance) group_right () (max_over_time(memdiag_stall_reason[5m]) == 1)
            or on (job, instance) max_over_time(memdiag_stall_level[%(stallCriticalWindow)s]) >= 4
          ||| % $._config,
          'for': '2m',
          labels: { severity: 'critical' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagStallingCritical'),
            summary: '{{ $labels.instance }} is stalled on memory at the critical level{{ with $labels.reason }}: {{ . }}{{ end }}',
            description: stallReasons,
          },
        },
        // A cgroup with a limit judged as a scope (docs/verdicts.md "Cgroups as scopes of their own"): high
        // or worse, recurring within 2 minutes for 4 (or one stall of 2). Medium is common for a
        // job that lives at its limit; high means its tasks wait for memory 30 % of the time or more.
        {
          alert: 'MemdiagCgroupStalling',
          expr: 'max_over_time(memdiag_cgroup_stall_level[%(stallWindow)s]) >= 3' % $._config,
          'for': '4m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('cgroup-at-limit', 'MemdiagCgroupStalling'),
            summary: 'Cgroup {{ $labels.cgroup }} on {{ $labels.instance }} is stalling on memory (level {{ $value }} of 4)',
            description: '`memdiagd diagnose` on the node names its contributors and victims (also the pressure-role series with scope="{{ $labels.cgroup }}"), the evidence and what to do.',
          },
        },
        // The overcommit verdict (docs/verdicts.md "Overcommit risk"), mode-aware: in modes 0 and 1 more
        // is promised than the node can supply; in mode 2 the commit limit is near. One alert
        // per reason seen in the last 5 minutes.
        {
          alert: 'MemdiagOvercommitRisk',
          expr: |||
            (memdiag_overcommit_risk_level >= 2) * on (job, instance) group_right () (max_over_time(memdiag_overcommit_risk_reason[5m]) == 1)
            or on (job, instance) memdiag_overcommit_risk_level >= 2
          |||,
          'for': '10m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('overcommit', 'MemdiagOvercommitRisk'),
            summary: '{{ $labels.instance }} has promised more memory than it can pay (overcommit risk {{ $value }} of 4){{ with $labels.reason }}: {{ . }}{{ end }}',
            description: overcommitReasons,
          },
        },
        // High: in modes 0 and 1 the unbacked promise is twice the supply, so even half of it
        // coming due cannot be paid without OOM kills; in mode 2 (and Windows) the commit charge
        // is at 95 % of the limit (critical: under 100 MiB left, the kubelet's default hard
        // eviction threshold for memory.available, which on Windows is this headroom). 5
        // minutes, the kubelet's pressure transition period: a batch of short-lived promises
        // passes within it.
        {
          alert: 'MemdiagOvercommitRiskHigh',
          expr: |||
            (memdiag_overcommit_risk_level >= 3) * on (job, instance) group_right () (max_over_time(memdiag_overcommit_risk_reason[5m]) == 1)
            or on (job, instance) memdiag_overcommit_risk_level >= 3
          |||,
          'for': '5m',
          labels: { severity: 'critical' },
          annotations: {
            runbook_url: $._config.runbookURL('overcommit', 'MemdiagOvercommitRiskHigh'),
            summary: '{{ $labels.instance }} cannot pay what it promised (overcommit risk {{ $value }} of 4){{ with $labels.reason }}: {{ . }}{{ end }}',
            description: overcommitReasons,
          },
        },
        // MemAvailable's trend reaches 0 within 10 minutes. The forecast is only given for a
        // clear fall (R^2 >= 0.8 over 60 s, more than 1 % of memory, under an hour to go); 2
        // minutes confirms it over two windows. 10 minutes is the time someone has to act
        // before the kubelet's 100Mi hard eviction threshold, or the OOM killer, acts first.
        {
          alert: 'MemdiagMemoryExhaustionForecast',
          expr: 'memdiag_forecast_exhaustion_seconds < 600',
          'for': '2m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagMemoryExhaustionForecast'),
            summary: '{{ $labels.instance }} runs out of available memory in {{ $value | humanizeDuration }} at its current trend',
            description: 'memdiag_cgroup_pressure_role and `memdiagd diagnose` name who grows; stop or limit it before the OOM killer or the kubelet chooses.',
          },
        },
        // A cgroup's available memory (its limit less its working set, as the kubelet counts
        // it) reaches 0 within 5 minutes at its trend: its OOM kill, or a stall at its limit, is
        // coming. Shorter than the node's: a cgroup's limit is its own choice and a job growing
        // to it on purpose (a cache) is not rare; 5 minutes still leaves time to raise it.
        {
          alert: 'MemdiagCgroupMemoryExhaustionForecast',
          expr: 'memdiag_cgroup_forecast_exhaustion_seconds < 300',
          'for': '2m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('cgroup-at-limit', 'MemdiagCgroupMemoryExhaustionForecast'),
            summary: 'Cgroup {{ $labels.cgroup }} on {{ $labels.instance }} reaches its memory limit in {{ $value | humanizeDuration }} at its current trend',
            description: 'Its working set grows toward its limit: at the limit it reclaims and then is OOM-killed. Raise the limit or find what grows (memdiag_cgroup_process_resident_bytes).',
          },
        },
        // More is promised than can be supplied and the promises are being drawn (paid as page
        // faults) fast enough to use up MemAvailable + SwapFree within 15 minutes. Longer than
        // the MemAvailable forecast: it is the earlier warning, before the fall shows there.
        {
          alert: 'MemdiagOvercommitSupplyRunningOut',
          expr: 'memdiag_overcommit_exhaustion_seconds < 900',
          'for': '5m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('overcommit', 'MemdiagOvercommitSupplyRunningOut'),
            summary: 'Promises coming due on {{ $labels.instance }} use up what it can supply in {{ $value | humanizeDuration }}',
            description: 'memdiag_process_unbacked_promise_bytes names the largest promise holders; after the supply come reclaim stalls and OOM kills.',
          },
        },
        {
          alert: 'MemdiagCanarySlowPageFaults',
          expr: 'histogram_quantile(0.99, sum by (instance, cgroup, le) (rate(memdiag_canary_page_fault_seconds_bucket[10m]))) > 0.001',
          'for': '10m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('node-stall', 'MemdiagCanarySlowPageFaults'),
            summary: 'Giving a thread a page takes {{ $value | humanizeDuration }} at p99 in {{ $labels.cgroup }} on {{ $labels.instance }}',
            description: "memdiag's canary times the first touch of fresh pages; at over 1 ms a page fault waits for reclaim or compaction, so every allocating task in {{ $labels.cgroup }} does too. `memdiagd diagnose` on {{ $labels.instance }} says whether it stalls (reason slow_faults) and who contributes.",
          },
        },
        // Less than 5 % of the cgroup's limit (the lower of memory.max and memory.high) left for
        // its working set: usage less the inactive file cache reclaim gives back, as the kubelet
        // counts it for eviction. Usage alone would call every cgroup full of page cache "at its
        // limit". 10 minutes: a job that touches its limit while loading is not worth a page.
        {
          alert: 'MemdiagCgroupAtLimit',
          expr: |||
            memdiag_cgroup_available_bytes
              / on (job, instance, cgroup) group_left ()
                min by (job, instance, cgroup) ({__name__=~"memdiag_cgroup_memory_(limit|high)_bytes"})
              < %(cgroupAtLimitAvailableRatio)g
          ||| % $._config,
          'for': '10m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('cgroup-at-limit', 'MemdiagCgroupAtLimit'),
            summary: 'Memory cgroup {{ $labels.cgroup }} on {{ $labels.instance }} has {{ $value | humanizePercentage }} of its limit left for its working set',
            description: 'Its working set (usage less the page cache reclaim can give back) is within 5 % of its limit: it is reclaiming at its limit and will be throttled (memory.high) or OOM-killed (memory.max) if it grows. `memdiagd diagnose` on {{ $labels.instance }} says whether it stalls and who in it grows.',
          },
        },
        // The exact count (increase() would extrapolate to fractions of a task); a restart of
        // the daemon resets the counter and gives a negative difference: no alert.
        {
          alert: 'MemdiagOomKills',
          expr: 'memdiag_oom_victims_node_total - memdiag_oom_victims_node_total offset 10m > 0',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('oom-kills', 'MemdiagOomKills'),
            summary: 'The OOM killer chose {{ $value | humanize }} tasks on {{ $labels.instance }} in 10 minutes',
            description: 'memdiag_oom_victims_total says in which cgroups.',
          },
        },
        // The same without eBPF, from the cgroup's own memory.events oom_kill (v2) or its OOM
        // kills counted through memory.oom_control (v1), naming the cgroup (and its pod or unit).
        // Every kill counts: systemd-oomd and the kubelet act on pressure before the kernel has
        // to, so a kernel OOM kill means they did not. A kill in a cgroup removed within the
        // 10 minutes is not seen here (its series went with it); MemdiagOomKills and
        // memdiag_cgroups_oom_notifications_total still count it.
        {
          alert: 'MemdiagCgroupOomKills',
          expr: |||
            memdiag_cgroup_memory_events_total{event="oom_kill"}
              - memdiag_cgroup_memory_events_total{event="oom_kill"} offset 10m > 0
          |||,
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('oom-kills', 'MemdiagCgroupOomKills'),
            summary: 'The OOM killer chose {{ $value | humanize }} tasks in cgroup {{ $labels.cgroup }} on {{ $labels.instance }} in 10 minutes',
            description: 'The cgroup reached its memory limit and reclaim could not free enough. memdiag_cgroup_memory_fill_ratio and memdiag_cgroup_memory_usage_bytes show how close it runs; raise its limit or find what grows.',
          },
        },
        // The breaking verdict, one series per item (memdiag_breaking_item_level{kind, subject}):
        // high is a process at 90 % of vm.max_map_count, a cgroup with 5 % of its limit left that
        // reclaim cannot free, the canary's allocator refusing allocations, or an OOM kill in the
        // last diagnosis.breaking.oom_window (5 minutes, so a kill between scrapes is not lost).
        // One alert per subject; 1 minute so one sample's peak does not page, while a kill's
        // item, held 5 minutes, still fires once.
        {
          alert: 'MemdiagAboutToBreak',
          expr: 'memdiag_breaking_item_level >= 3',
          'for': '1m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('about-to-break', 'MemdiagAboutToBreak'),
            summary: '{{ $labels.subject }} on {{ $labels.instance }} is about to break ({{ $labels.kind }})',
            description: "memdiagd's /api/v1/diagnosis (its breaking section) and `memdiagd diagnose` say what fails at which limit and what to do: raise vm.max_map_count or stop the fragmenting allocator (map_areas), raise the cgroup's limit or shrink its job (cgroup_limit), or who was OOM-killed at whose limit (oom_kill).",
          },
        },
        // Critical items: a process at 99 % of vm.max_map_count (its next mmap fails), a cgroup at
        // 99 % of its limit in memory reclaim cannot free, three or more OOM kills by one scope
        // within the window (a crash loop). Inhibit MemdiagAboutToBreak with it (equal:
        // [instance, kind, subject]).
        {
          alert: 'MemdiagAboutToBreakCritical',
          expr: 'memdiag_breaking_item_level >= 4',
          'for': '1m',
          labels: { severity: 'critical' },
          annotations: {
            runbook_url: $._config.runbookURL('about-to-break', 'MemdiagAboutToBreakCritical'),
            summary: '{{ $labels.subject }} on {{ $labels.instance }} is breaking now ({{ $labels.kind }})',
            description: "memdiagd's /api/v1/diagnosis (its breaking section) says what fails at which limit; a kind of oom_kill at this level is a crash loop: the same scope killed three or more tasks in 5 minutes.",
          },
        },
        // A /proc process scan blocked this long: some process's mmap_lock is held, usually by
        // a task stuck in reclaim. memdiagd serves its last scan; ps, top and agents hang on it.
        {
          alert: 'MemdiagProcessMapsUnreadable',
          expr: 'memdiag_process_scan_in_flight_seconds > 30',
          'for': '2m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('process-maps-unreadable', 'MemdiagProcessMapsUnreadable'),
            summary: "A process's memory map on {{ $labels.instance }} has been unreadable for {{ $value | humanizeDuration }}",
            description: 'Its mmap_lock is held, usually by a task stuck in reclaim: ps, top and anything else reading /proc/PID/maps or /proc/PID/cmdline of that process hang too. Look at memdiag_reclaim_stall_seconds for who stalls.',
          },
        },
        // The daemon answers scrapes but its last sample is over a minute old: every verdict
        // above is stale. /healthz is 503 after two intervals + 2 s, and systemd's watchdog
        // (WatchdogSec=30s) or the DaemonSet's liveness probe (3 x 10 s) restarts a stuck
        // sampler within about 30 s; 60 s for 2 minutes means that did not help (no
        // supervisor, or every new sampler gets stuck in the same kernel read).
        {
          alert: 'MemdiagSamplerStale',
          expr: 'time() - memdiag_sampler_last_sample_timestamp_seconds > 60',
          'for': '2m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('memdiag-health', 'MemdiagSamplerStale'),
            summary: 'memdiagd on {{ $labels.instance }} has not completed a sample for {{ $value | humanizeDuration }}',
            description: 'Its verdicts are stale. The sampler is stuck, most likely in a kernel read of a node deep in reclaim; its log names the source. A restart does not help while the read blocks.',
          },
        },
        // A source that cannot read its kernel interface leaves its part of every verdict blind
        // (no eBPF: stall time only from PSI; no cgroups: no scope but the node). 15 minutes: a
        // source retried at most once a minute (eBPF) gets its retries first.
        {
          alert: 'MemdiagSourceDown',
          expr: 'memdiag_source_up == 0',
          'for': '15m',
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('memdiag-health', 'MemdiagSourceDown'),
            summary: 'memdiagd on {{ $labels.instance }} cannot read {{ $labels.source }}',
            description: "The verdicts on {{ $labels.instance }} go on without {{ $labels.source }}: what it measures is missing from them, and their confidence says lower_bound where it mattered. The daemon's log (journalctl -u memdiagd) says why, once; /api/v1/diagnosis lists it under sources_down.",
          },
        },
        // The daemon cannot be scraped: the node may be drowning (every scrape timing out is what
        // a node deep in reclaim looks like from outside), or the daemon is stopped or crashing.
        // Every other memdiag alert goes quiet with it, so this one must not. The job label is
        // the scrape job's name (deploy/prometheus/scrape.yml: memdiag).
        {
          alert: 'MemdiagDown',
          expr: 'up{%(memdiagSelector)s} == 0' % $._config,
          'for': $._config.memdiagDownFor,
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('memdiag-health', 'MemdiagDown'),
            summary: 'memdiagd on {{ $labels.instance }} cannot be scraped',
            description: 'Prometheus has not scraped memdiagd on {{ $labels.instance }} for 5 minutes: none of its stall, overcommit or breaking alerts can fire for that node. If the node answers ssh slowly or not at all it is likely drowning in reclaim; otherwise look at systemctl status memdiagd and its journal.',
          },
        },
        // No memdiag target at all: service discovery lost them, or the scrape job was renamed.
        // Without it MemdiagDown has no series to fire on.
        {
          alert: 'MemdiagAbsent',
          expr: 'absent(up{%(memdiagSelector)s})' % $._config,
          'for': $._config.memdiagAbsentFor,
          labels: { severity: 'warning' },
          annotations: {
            runbook_url: $._config.runbookURL('memdiag-health', 'MemdiagAbsent'),
            summary: 'Prometheus has no memdiagd target (%(memdiagSelector)s)' % $._config,
            description: "No node is watched by memdiag: its alerts cannot fire anywhere. Check the scrape job (deploy/prometheus/scrape.yml), the DaemonSet's pods and its ServiceMonitor.",
          },
        },
      ],
    }],
  },
}
