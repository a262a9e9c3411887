// SPDX-License-Identifier: Apache-2.0
// What a user of the mixin sets: override any of these with
//   (import 'mixin.libsonnet') + { _config+:: { memdiagSelector: 'job="node-memdiag"' } }
{
  _config+:: {
    // The scrape job's selector: the alerts that fire when memdiag cannot be scraped read `up`
    // with it (the daemon's own series are named memdiag_* and need none).
    memdiagSelector: 'job="memdiag"',
    // The label that tells clusters apart when one Prometheus (or a federation) holds several;
    // the recording rules keep it through every aggregation, and a fleet without it loses nothing.
    clusterLabel: 'cluster',
    // How long memdiag may be unscrapable, or have no target at all, before it alerts.
    memdiagDownFor: '5m',
    memdiagAbsentFor: '15m',
    // Stalls come and go: a stall alert reads the level's highest over this window, so a stall
    // that keeps coming back within it holds the alert (critical: the shorter window).
    stallWindow: '2m',
    stallCriticalWindow: '1m',
    // A cgroup is at its limit below this share of its limit left for its working set.
    cgroupAtLimitAvailableRatio: 0.05,
    // Where the runbooks are served: docs/runbooks/ of this repository. Point it at your copy.
    runbookURLBase: 'https://github.com/memdiag/memdiag/blob/main/docs/runbooks/',
    runbookURL(page, alert):: self.runbookURLBase + page + '.md#' + std.asciiLower(alert),
    // What every dashboard shares: its tags (the dashboards link to each other by tag), how
    // often it refreshes, and the time range it opens with.
    dashboardTags: ['memdiag'],
    dashboardRefresh: '30s',
    dashboardPeriod: 'now-6h',
  },
}
