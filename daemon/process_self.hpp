// SPDX-License-Identifier: Apache-2.0
// The daemon's own process, as every Prometheus client library exports it (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), so the dashboards and alerts people already have for
// their exporters work on memdiagd too. Read once per sample by the sampler thread from
// /proc/self (the real one, whatever --path.procfs says: it is this process), never at scrape
// time. The parser is pure; ProcessSelfReader does the reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "exporters/prometheus/daemon_posture.hpp"
#include "probes/core/expected.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {

// The figures of /proc/self/stat: CPU time (user + system), resident and virtual size, and the
// start time, from the clock tick, the page size and the boot time (/proc/stat btime).
Expected<prom::ProcessSelf> parse_self_stat(std::string_view stat, long ticks_per_second, std::uint64_t page_size,
                                            std::uint64_t boot_time_seconds);

// "btime N" of /proc/stat: when the machine booted, in Unix seconds.
Expected<std::uint64_t> parse_boot_time(std::string_view proc_stat);

class ProcessSelfReader {
 public:
  ProcessSelfReader();
  // The figures now, with the open descriptors counted and RLIMIT_NOFILE; nullopt when
  // /proc/self/stat cannot be read (the reason is logged once).
  std::optional<prom::ProcessSelf> read();

 private:
  KernelFile stat_;
  std::optional<std::uint64_t> boot_time_;
  long ticks_per_second_;
  std::uint64_t page_size_;
  bool said_why_ = false;
};

}  // namespace memdiag
