// SPDX-License-Identifier: Apache-2.0
// The Grafana dashboards of the mixin. Each dashboard's panels are in dashboards/NAME.json, as
// Grafana exports them (edit them there, in Grafana or by hand); what every dashboard shares is
// set here from _config: its tags, refresh, time range and the links between them.
// deploy/mixin/build.sh writes deploy/grafana/NAME.json from this.
local withCommon(config, dashboard) = dashboard {
  tags: config.dashboardTags,
  refresh: config.dashboardRefresh,
  time: { from: config.dashboardPeriod, to: 'now' },
  links: [
    link + (if std.objectHas(link, 'tags') && link.tags == ['memdiag'] then { tags: config.dashboardTags } else {})
    for link in super.links
  ],
};

{
  grafanaDashboards+:: {
    [name]: withCommon($._config, $._dashboardSources[name])
    for name in std.objectFields($._dashboardSources)
  },
  // import needs a literal path: one line per dashboard.
  _dashboardSources:: {
    'memdiag.json': import 'dashboards/memdiag.json',
    'memdiag-node.json': import 'dashboards/memdiag-node.json',
    'memdiag-cgroups.json': import 'dashboards/memdiag-cgroups.json',
    'memdiag-processes.json': import 'dashboards/memdiag-processes.json',
    'memdiag-canary.json': import 'dashboards/memdiag-canary.json',
    'memdiag-windows.json': import 'dashboards/memdiag-windows.json',
    'memdiag-fleet.json': import 'dashboards/memdiag-fleet.json',
  },
}
