// Who a cgroup belongs to, from its path alone: Kubernetes pods and containers under both
// kubelet cgroup drivers, and systemd units.
//   cgroupfs: /kubepods/burstable/pod<uid>/<container-id>, /kubepods/pod<uid>/<id> (guaranteed)
//   systemd:  /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/
//             cri-containerd-<id>.scope (also docker-<id>.scope, crio-<id>.scope)
//   systemd units: /system.slice/sshd.service -> unit "sshd.service"
#pragma once

#include <string>
#include <string_view>

namespace memdiag {

struct WorkloadIdentity {
  std::string pod_uid;       // with dashes, as the API server spells it; "" if not a pod
  std::string qos_class;     // "guaranteed", "burstable", "besteffort"; "" if not under kubepods
  std::string container_id;  // the runtime's id without "cri-containerd-"/"docker-" prefix and ".scope"
  std::string unit;          // the innermost systemd unit (.service, .scope, .slice) outside kubepods
};

// `path` is relative to the hierarchy root and starts with '/'.
WorkloadIdentity identify_cgroup(std::string_view path);

}  // namespace memdiag
