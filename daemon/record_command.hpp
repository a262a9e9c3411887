// SPDX-License-Identifier: Apache-2.0
// `memdiagd record --output FILE [--duration S] [--config FILE] [--interval S] [--max-size MiB]`:
// samples this node as the daemon would (the config's sources) and writes the snapshots to a
// recording (probes/recording/recording_format.hpp) that `memdiagd diagnose --replay FILE`
// turns into the same report anywhere, to attach to a ticket. Each snapshot is written as it
// is taken, so a recorder that is killed leaves the ones before; SIGINT or SIGTERM ends it
// cleanly. Bounded by the duration and the size cap.
// Exit codes: 0 recorded, 1 could not write, 2 bad arguments or config.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct RecordOptions {
  std::string output;  // "-": standard output
  std::optional<std::string> config_path;
  std::chrono::milliseconds duration{60'000};
  std::optional<std::chrono::milliseconds> interval;  // the config's when absent
  std::uint64_t max_bytes = 256ull << 20;
  bool help = false;
};

Expected<RecordOptions> parse_record_args(const std::vector<std::string>& args);
std::string record_usage();
int run_record(const std::vector<std::string>& args);

}  // namespace memdiag
