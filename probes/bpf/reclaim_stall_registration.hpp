// SPDX-License-Identifier: Apache-2.0
// The eBPF reclaim-stall source (`sources.reclaim_stall`): its options, their validation and
// its factory. Built with or without eBPF (see bpf_factories.hpp).
#pragma once

#include "probes/bpf/reclaim_stall_options.hpp"
#include "probes/core/source_registration.hpp"

namespace memdiag {

SourceRegistration reclaim_stall_registration();

}  // namespace memdiag
