// SPDX-License-Identifier: Apache-2.0
// How much more a memory cgroup can take before a limit on the way up makes it reclaim: the
// least, over the cgroup and each ancestor below the hierarchy's root, of (limit - usage), where
// the limit is v2's memory.high or memory.max, whichever is lower, or v1's
// memory.limit_in_bytes. The canary reads its own before each cycle: a cycle that would push
// its cgroup (the daemon's, or a watched workload's) into reclaim at its limit is skipped, as
// one that would add to a node's crisis is, and the daemon beside it is not throttled for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memdiag::canary {

// A limit file's value: bytes, or nullopt for "max" (v2) and v1's "unlimited" (a value at or
// above 2^62: the page counter's maximum, rounded down to the page size); nullopt as well
// for garbage.
std::optional<std::uint64_t> parse_cgroup_limit(std::string_view text);

// The headroom of the cgroup directory `dir` under the hierarchy mounted at `root` (dir is
// root or below it). nullopt when no limit applies, or nothing can be read.
std::optional<std::uint64_t> cgroup_headroom(const std::string& dir, const std::string& root, bool v2);

}  // namespace memdiag::canary
