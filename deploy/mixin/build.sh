#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the files generated from the mixin (Debian's jsonnet): the alerting and recording rules
# that deploy/prometheus/ ships and the dashboards of deploy/grafana/ (JSON, 2-space indent, keys
# sorted). With --check it writes nothing and fails when a checked-in file differs from what the
# mixin generates (a ctest runs it, so they cannot drift).
#   deploy/mixin/build.sh [--check]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../prometheus"
grafana="$here/../grafana"
check=false
case "${1:-}" in --check) check=true ;; "") ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac
command -v jsonnet >/dev/null || { echo "build.sh: jsonnet is not installed (deploy/install-deps.sh --test)" >&2; exit 1; }

generate() {  # FIELD HEADER
  printf '# SPDX-License-Identifier: Apache-2.0\n# %s\n# Generated from deploy/mixin (%s); edit it there and run deploy/mixin/build.sh.\n' "$2" "$3"
  jsonnet -J "$here" -S -e "std.manifestYamlDoc((import 'mixin.libsonnet').$1, indent_array_in_object=true, quote_keys=false)"
}

stale=()
for spec in "prometheusAlerts|memdiag-alerts.yml|memdiag's alerting rules; their tests: memdiag-alerts.test.yml (promtool test rules).|alerts.libsonnet" \
            "prometheusRules|memdiag-recording.yml|memdiag's recording rules for the fleet view; their tests: memdiag-recording.test.yml.|rules.libsonnet"; do
  IFS='|' read -r field file header source <<<"$spec"
  text=$(generate "$field" "$header" "$source")
  if $check; then
    [[ "$text" == "$(cat "$out/$file")" ]] || stale+=("deploy/prometheus/$file")
  else
    printf '%s\n' "$text" > "$out/$file"
  fi
done
# Each dashboard, as Grafana imports it.
names=$(jsonnet -J "$here" -S -e "std.join('\n', std.objectFields((import 'mixin.libsonnet').grafanaDashboards))")
$check || mkdir -p "$grafana"
for name in $names; do
  text=$(jsonnet -J "$here" -e "(import 'mixin.libsonnet').grafanaDashboards['$name']" \
         | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))')
  if $check; then
    [[ -f "$grafana/$name" && "$text" == "$(cat "$grafana/$name")" ]] || stale+=("deploy/grafana/$name")
  else
    printf '%s\n' "$text" > "$grafana/$name"
  fi
done
if $check; then
  for file in "$grafana"/*.json; do
    grep -qx "$(basename "$file")" <<<"$names" || stale+=("deploy/grafana/$(basename "$file") (not in the mixin)")
  done
fi
if ((${#stale[@]})); then
  echo "build.sh: out of date with deploy/mixin: ${stale[*]} (run deploy/mixin/build.sh)" >&2
  exit 1
fi
