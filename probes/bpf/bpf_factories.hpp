// SPDX-License-Identifier: Apache-2.0
// What the eBPF sources hand to the rest of the daemon: the reclaim-stall source and the task
// iterator's process scanner. Defined by the eBPF code (reclaim_stall_source.cpp,
// bpf_process_scanner.cpp), or by without_bpf.cpp in a build without eBPF
// (cmake -DMEMDIAG_BPF=OFF), where reclaim_stall reports itself unsupported with that reason and
// processes reads /proc, so the daemon and its config look the same either way. No libbpf here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "probes/bpf/reclaim_stall_options.hpp"
#include "probes/core/kernel_paths.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/process/process_census.hpp"

namespace memdiag {

std::unique_ptr<Source> make_reclaim_stall_source(const KernelPaths& paths, const ReclaimStallOptions& options);

// Opens the eBPF task iterator with this BTF ("" = the kernel's); empty without eBPF.
BpfScannerOpener task_iterator_opener(const std::string& btf_path);

// The BPF loader child (bpf_loader_child.hpp) as its own process: the daemon names the program
// that has the `--bpf-loader` mode (itself), and that mode's entry. Without eBPF: nothing to
// load; the mode exits 2.
void set_bpf_loader_program(std::string path);
int run_bpf_loader(const std::vector<std::string>& args);

}  // namespace memdiag
