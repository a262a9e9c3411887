// SPDX-License-Identifier: Apache-2.0
// The OS-neutral system memory section (probes/core/system_memory_section.hpp) from a sampled
// /proc/meminfo table: MemTotal, MemAvailable, SwapTotal, SwapFree, Committed_AS, CommitLimit,
// and AnonPages + Shmem + swap in use as what backs the commit charge now.
// The fields' positions are looked up once per schema (the kernel prints the same fields in the
// same order until reboot), so a sample copies nine numbers.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>

#include "probes/core/field_table.hpp"
#include "probes/core/system_memory_section.hpp"

namespace memdiag {

class MeminfoSystemMemory {
 public:
  // Absent when the table has no MemTotal. Kernels before 3.14 have no MemAvailable: MemFree
  // stands in (an underestimate: it leaves out reclaimable page cache).
  std::optional<SystemMemory> from(const FieldTable& meminfo);

 private:
  enum Field : std::size_t {
    kMemTotal, kMemAvailable, kMemFree, kSwapTotal, kSwapFree, kCommitted, kCommitLimit, kAnonPages, kShmem, kCount
  };
  static constexpr std::size_t kAbsent = ~std::size_t{0};

  std::shared_ptr<const FieldSchema> schema_;  // what positions_ was computed for
  std::array<std::size_t, kCount> positions_{};
};

}  // namespace memdiag
