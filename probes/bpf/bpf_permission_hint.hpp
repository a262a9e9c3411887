// SPDX-License-Identifier: Apache-2.0
// Why the kernel refused a bpf() call, in words that point at the fix. EPERM from bpf() has
// three usual causes that look alike from the call: the loader lacks CAP_BPF/CAP_PERFMON (often
// because no_new_privs kept an executed loader from gaining them), a seccomp filter refuses the
// system call (systemd's SystemCallFilter= answers EPERM when SystemCallErrorNumber=EPERM), or a
// security module does. The loader's own /proc/self/status tells the first two apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag {

// What /proc/self/status says about the caller's footing.
struct BpfPermissionFooting {
  std::uint64_t effective_capabilities = 0;  // CapEff
  int seccomp_mode = 0;                      // Seccomp: 0 none, 1 strict, 2 filter
  bool no_new_privs = false;                 // NoNewPrivs
};

// Parses the CapEff, Seccomp and NoNewPrivs lines of /proc/PID/status; CapEff is required, the
// other two (kernels before 4.10 lack NoNewPrivs, those without CONFIG_SECCOMP Seccomp) are not.
Expected<BpfPermissionFooting> parse_bpf_permission_footing(std::string_view proc_status);

// The hint put in parentheses after "permission denied loading BPF", e.g. "needs CAP_BPF and
// CAP_PERFMON; the loader holds neither". Constant for one footing, so it logs once.
std::string bpf_permission_hint(const BpfPermissionFooting& footing);

// The hint for the calling process, read from /proc/self/status; the bare "needs CAP_BPF and
// CAP_PERFMON" when that cannot be read.
std::string bpf_permission_hint();

}  // namespace memdiag
