// SPDX-License-Identifier: Apache-2.0
// Who a cgroup belongs to (a Kubernetes pod and container, or a systemd unit), as the
// cgroup section labels it. Linux derives it from the cgroup path
// (probes/linux/cgroup/kubernetes_identity.hpp).
#pragma once

#include <string>

namespace memdiag {

struct WorkloadIdentity {
  std::string pod_uid;       // with dashes, as the API server spells it; "" if not a pod
  std::string qos_class;     // "guaranteed", "burstable", "besteffort"; "" if not under kubepods
  std::string container_id;  // the runtime's id without "cri-containerd-"/"docker-" prefix and ".scope"
  std::string unit;          // the innermost systemd unit (.service, .scope, .slice) outside kubepods

  bool operator==(const WorkloadIdentity&) const = default;
};

}  // namespace memdiag
