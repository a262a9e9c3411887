// SPDX-License-Identifier: Apache-2.0
// Who a cgroup belongs to, from its path alone: Kubernetes pods and containers under both
// kubelet cgroup drivers, and systemd units.
//   cgroupfs: /kubepods/burstable/pod<uid>/<container-id>, /kubepods/pod<uid>/<id> (guaranteed)
//   systemd:  /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/
//             cri-containerd-<id>.scope (also docker-<id>.scope, crio-<id>.scope)
//   systemd units: /system.slice/sshd.service -> unit "sshd.service"
#pragma once

#include <string_view>

#include "probes/core/workload_identity.hpp"

namespace memdiag {

// `path` is relative to the hierarchy root and starts with '/'.
WorkloadIdentity identify_cgroup(std::string_view path);

}  // namespace memdiag
