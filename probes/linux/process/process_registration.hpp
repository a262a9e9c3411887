// SPDX-License-Identifier: Apache-2.0
// The process source (`sources.processes`): its options, their validation and its factory.
// The eBPF task iterator is handed in (probes/catalog passes probes/bpf's), so this library
// needs no libbpf and a build without eBPF simply hands in none.
#pragma once

#include <functional>
#include <string>

#include "probes/core/source_registration.hpp"
#include "probes/linux/process/process_census.hpp"
#include "probes/linux/process/process_options.hpp"

namespace memdiag {

// The opener of the eBPF scanner for a BTF path ("" = the kernel's); an empty opener when there
// is none.
using BpfScannerFactory = std::function<BpfScannerOpener(const std::string& btf_path)>;

SourceRegistration processes_registration(BpfScannerFactory bpf_scanners);

}  // namespace memdiag
