// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/meminfo_system_memory.hpp"

#include <string_view>

namespace memdiag {
namespace {

constexpr std::array<std::string_view, 9> kFieldNames = {"MemTotal",     "MemAvailable", "MemFree",
                                                         "SwapTotal",    "SwapFree",     "Committed_AS",
                                                         "CommitLimit",  "AnonPages",    "Shmem"};

}  // namespace

std::optional<SystemMemory> MeminfoSystemMemory::from(const FieldTable& meminfo) {
  if (!meminfo.schema) return std::nullopt;
  if (meminfo.schema != schema_) {
    positions_.fill(kAbsent);
    for (std::size_t i = 0; i < meminfo.schema->names.size(); ++i) {
      for (std::size_t f = 0; f < kFieldNames.size(); ++f) {
        if (meminfo.schema->names[i] == kFieldNames[f] && positions_[f] == kAbsent) positions_[f] = i;
      }
    }
    schema_ = meminfo.schema;
  }
  const auto value = [&](Field f) -> std::optional<std::uint64_t> {
    const std::size_t at = positions_[f];
    if (at == kAbsent || at >= meminfo.values.size()) return std::nullopt;
    return meminfo.values[at];
  };
  const auto total = value(kMemTotal);
  if (!total) return std::nullopt;
  SystemMemory memory;
  memory.physical_total_bytes = *total;
  memory.physical_available_bytes = value(kMemAvailable).value_or(value(kMemFree).value_or(0));
  memory.swap_total_bytes = value(kSwapTotal).value_or(0);
  memory.swap_free_bytes = value(kSwapFree).value_or(0);
  memory.commit_charge_bytes = value(kCommitted);
  memory.commit_limit_bytes = value(kCommitLimit);
  // What backs the promises now: the anonymous and shared-memory pages in RAM (Committed_AS
  // charges private writable and shared anonymous/tmpfs memory) and the pages of either that
  // were swapped out.
  const auto anon = value(kAnonPages);
  const auto shmem = value(kShmem);
  if (memory.commit_charge_bytes && anon && shmem) {
    const std::uint64_t swap_used =
        memory.swap_total_bytes > memory.swap_free_bytes ? memory.swap_total_bytes - memory.swap_free_bytes : 0;
    memory.commit_backed_bytes = *anon + *shmem + swap_used;
  }
  return memory;
}

}  // namespace memdiag
