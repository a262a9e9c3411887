// Every source the daemon can run, by the names the `sources:` config section uses: the Linux
// sources of probes/linux and the eBPF reclaim-stall source of probes/bpf. In a build without
// eBPF (MEMDIAG_BPF=OFF) the latter reports itself unsupported with that reason, so the daemon
// and its config look the same either way.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "probes/core/source.hpp"
#include "probes/linux/linux_sources.hpp"

namespace memdiag {

const std::vector<std::string_view>& source_names();

// Whether the source has a refresh_interval option (the others read every sample).
bool source_has_refresh_interval(std::string_view name);

// nullptr for an unknown name.
std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths, const SourceOptions& options);

}  // namespace memdiag
