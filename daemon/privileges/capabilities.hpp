// SPDX-License-Identifier: Apache-2.0
// The daemon's own Linux capabilities: which it holds, and giving up those it no longer needs.
// Raw capget/capset (no libcap): three 64-bit sets are all the daemon ever looks at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag::privileges {

// A set of capabilities as a bit mask (bit N = capability N, as in <linux/capability.h>).
using CapabilityMask = std::uint64_t;

inline constexpr int kCapDacReadSearch = 2;
inline constexpr int kCapSetpcap = 8;
inline constexpr int kCapNetBindService = 10;
inline constexpr int kCapIpcLock = 14;
inline constexpr int kCapSysPtrace = 19;
inline constexpr int kCapSysAdmin = 21;
inline constexpr int kCapPerfmon = 38;
inline constexpr int kCapBpf = 39;

constexpr CapabilityMask capability_bit(int capability) { return CapabilityMask{1} << capability; }

// "cap_sys_ptrace" for 19; "cap_N" for a number this table does not know (a newer kernel's).
std::string capability_name(int capability);

// The names of the capabilities in `mask`, lowest first.
std::vector<std::string> capability_names(CapabilityMask mask);

struct CapabilitySets {
  CapabilityMask effective = 0;
  CapabilityMask permitted = 0;
  CapabilityMask inheritable = 0;
};

Expected<CapabilitySets> current_capabilities();

// Narrows the calling thread's capabilities (threads it creates later inherit them): the
// bounding set to `bounding` (only while CAP_SETPCAP is held, i.e. run as root outside a unit
// that already bounds it), the permitted and inheritable sets to `permitted`, the effective set
// to `effective` (within `permitted`). Lowering a capability from the permitted or inheritable
// set lowers it from the ambient set too. Never adds one.
Expected<CapabilitySets> narrow_capabilities(CapabilityMask effective, CapabilityMask permitted, CapabilityMask bounding);

}  // namespace memdiag::privileges
