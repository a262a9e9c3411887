// Makes the daemon's sources by name (daemon/source_names.hpp): the Linux sources of
// probes/linux, the eBPF reclaim-stall source of probes/bpf and the process source with its
// eBPF scanner. In a build without eBPF (MEMDIAG_BPF=OFF) reclaim_stall reports itself
// unsupported with that reason and processes reads /proc, so the daemon and its config look
// the same either way.
#pragma once

#include <memory>
#include <string_view>

#include "daemon/source_names.hpp"

#include "probes/core/source.hpp"
#include "probes/linux/linux_sources.hpp"

namespace memdiag {

// nullptr for an unknown name.
std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths, const SourceOptions& options);

}  // namespace memdiag
