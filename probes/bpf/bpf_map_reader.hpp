// SPDX-License-Identifier: Apache-2.0
// Reading whole BPF maps from user space cheaply. A hash map is read in batches
// (BPF_MAP_LOOKUP_BATCH, kernel >= 5.6: one syscall per few hundred entries); kernels without
// it fall back to get_next_key + lookup (two syscalls per entry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

// Reused between reads so that reading does not allocate once warmed up.
struct BpfMapScratch {
  std::vector<unsigned char> keys;
  std::vector<unsigned char> values;
};

// Calls `visit(key, value)` for every entry of the hash map `map_fd` (whose keys and values
// are `key_size` and `value_size` bytes). Entries added or deleted meanwhile may or may not be
// visited; the others are visited exactly once. Errors name `map_name`.
Status for_each_map_entry(int map_fd, const char* map_name, std::size_t key_size, std::size_t value_size,
                          BpfMapScratch& scratch,
                          const std::function<void(const void* key, const void* value)>& visit);

// Sums entry `index` of a BPF_MAP_TYPE_PERCPU_ARRAY of u64 over all possible CPUs.
Expected<std::uint64_t> sum_percpu_u64(int map_fd, const char* map_name, std::uint32_t index);

}  // namespace memdiag
