// SPDX-License-Identifier: Apache-2.0
// memdiag's monitoring mixin, as node-mixin and kubernetes-mixin are built: the alerting and
// recording rules from one source with the selector, thresholds and runbook location in
// _config (config.libsonnet). deploy/mixin/build.sh writes the files deploy/prometheus/ ships.
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'rules.libsonnet')
