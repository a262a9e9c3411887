// SPDX-License-Identifier: Apache-2.0
// Single-value cgroup files: memory.current, memory.max, memory.high, memory.low,
// memory.swap.current (v2); memory.usage_in_bytes, memory.limit_in_bytes, memory.failcnt,
// memory.memsw.* (v1). "Unlimited" has two spellings: v2 writes "max", v1 writes
// PAGE_COUNTER_MAX * PAGE_SIZE (9223372036854771712 with 4 KiB pages). Both become nullopt,
// so no 2^63 ever reaches a metric.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag {

// A number of bytes followed by one '\n'.
Expected<std::uint64_t> parse_cgroup_u64(std::string_view text);

// A limit: "max\n" or a number; numbers at or above kCgroupV1Unlimited are unlimited too.
// nullopt means unlimited.
Expected<std::optional<std::uint64_t>> parse_cgroup_limit(std::string_view text);

// The smallest value v1 prints for "no limit" on any page size we know (0x7FFFFFFFFFFF0000 with
// 64 KiB pages; 4 KiB pages give 0x7FFFFFFFFFFFF000).
inline constexpr std::uint64_t kCgroupV1Unlimited = 0x7FFFFFFFFFFF0000ull;

}  // namespace memdiag
