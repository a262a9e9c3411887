// SPDX-License-Identifier: Apache-2.0
// The daemon's footing on Linux, settled once at start, before any thread (capabilities are
// per thread; threads inherit them when created): its memory locked resident, and only the
// capabilities it uses itself.
//
// The daemon never loads eBPF programs itself: a child it executes (`memdiagd --bpf-loader`)
// loads and attaches them and hands back descriptors, and from Linux 6.5 on reading a map or
// running an iterator through a descriptor needs no capability. So the daemon's effective set
// keeps only CAP_SYS_PTRACE (other users' /proc/PID/maps, and seeing them under
// ProtectProc=ptraceable) and CAP_IPC_LOCK when the memory lock rests on it. CAP_BPF, CAP_PERFMON
// and CAP_DAC_READ_SEARCH (tracefs, for classic tracepoints) stay permitted and inheritable, not
// effective, for the loader: exec hands them to a root child from there even under
// no_new_privs (NoNewPrivileges=, where the bounding set alone would not), and to a child of
// another user through the ambient set. Everything else goes from every set. Before 6.5 the
// daemon keeps CAP_BPF and CAP_PERFMON effective: reading its maps needs them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/privileges/capabilities.hpp"
#include "daemon/privileges/memory_lock.hpp"
#include "exporters/prometheus/daemon_posture.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::privileges {

struct PrivilegeSettings {
  bool lock_memory = true;
  bool drop_capabilities = true;
  // The listen address's port is below 1024: CAP_NET_BIND_SERVICE stays effective where it is
  // held (root outside the unit), since the listener is bound after the narrowing and again on a
  // reload that changes the address.
  bool binds_privileged_port = false;
};

// What the loader children need (kept in the bounding set, or carried to them as ambient).
CapabilityMask loader_capabilities();
// What the daemon itself uses: on kernels where BPF objects are usable without CAP_BPF, only
// CAP_SYS_PTRACE (and CAP_IPC_LOCK when its memory lock needs it).
CapabilityMask own_capabilities(bool keep_ipc_lock, bool bpf_needs_capability, bool keep_net_bind_service = false);

// Whether "HOST:PORT" (the listen address) names a port below 1024; false when it has no port.
bool binds_privileged_port(std::string_view listen_address);

// Whether a kernel of this release ("6.18.0-...") lets a process read and iterate BPF objects it
// holds descriptors for without CAP_BPF (from 6.5, bpf() checks capabilities per command).
bool kernel_allows_bpf_use_without_capability(std::string_view release);

class LeastPrivilege {
 public:
  // Locks memory and narrows capabilities; call before any thread starts.
  explicit LeastPrivilege(PrivilegeSettings settings);

  // What the daemon now runs with (called after each sample, on the sampler's thread).
  std::shared_ptr<prom::DaemonPosture> posture() const;

  // Logs what was settled, once the daemon serves: a daemon that cannot even bind its port
  // says that in one line, not after its footing.
  void log_what_was_settled() const;

 private:
  void say(spdlog::level::level_enum level, std::string line);

  PrivilegeSettings settings_;
  MemoryLock lock_;
  std::vector<std::pair<spdlog::level::level_enum, std::string>> said_;
};

}  // namespace memdiag::privileges
