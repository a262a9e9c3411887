// SPDX-License-Identifier: Apache-2.0
// memdiag's monitoring mixin, as node-mixin and kubernetes-mixin are built: the alerting and
// recording rules and the Grafana dashboards from one source, with the selector, thresholds,
// runbook location and dashboard settings in _config (config.libsonnet). deploy/mixin/build.sh
// writes the files deploy/prometheus/ and deploy/grafana/ ship.
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'rules.libsonnet') +
(import 'dashboards.libsonnet')
