// The names of every source the daemon can run, as the `sources:` config section spells them:
// the Linux sources of probes/linux, the eBPF reclaim-stall source of probes/bpf and the
// process source (eBPF or /proc). Kept apart
// from the factory (daemon/sources.hpp) so the config needs no libbpf.
#pragma once

#include <string_view>
#include <vector>

namespace memdiag {

const std::vector<std::string_view>& source_names();

// Whether the source has a refresh_interval option (the others read every sample).
bool source_has_refresh_interval(std::string_view name);

}  // namespace memdiag
