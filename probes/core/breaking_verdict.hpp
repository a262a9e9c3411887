// SPDX-License-Identifier: Apache-2.0
// What is about to break (the third question after "who stalls" and "what was promised"):
// walls a job hits whatever the free memory, each named with its subject, the figure, the limit
// and what fails at it, and the kills that already happened (probes/analysis/breaking_model.hpp).
// Plain data, computed once per sample and rendered from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/verdict.hpp"

namespace memdiag {

// The kinds of item (exported as memdiag_breaking_items{kind}).
namespace breaking_kind {
// A process near vm.max_map_count: mmap, and munmap/mprotect that split a mapping, fail.
inline constexpr std::string_view kMapAreas = "map_areas";
// A cgroup whose memory that reclaim cannot free (usage less reclaimable page cache) is near
// its hard limit: the next growth is an OOM kill inside it.
inline constexpr std::string_view kCgroupLimit = "cgroup_limit";
// The canary's allocator holds nearly its ceiling, or refused allocations.
inline constexpr std::string_view kAllocatorCeiling = "allocator_ceiling";
// Tasks were killed for memory in the recent window (the kernel, systemd-oomd or oomd).
inline constexpr std::string_view kOomKill = "oom_kill";
inline constexpr std::string_view kAll[] = {kMapAreas, kCgroupLimit, kAllocatorCeiling, kOomKill};
}  // namespace breaking_kind

// Who killed (BreakingItem::source of an oom_kill item, OomKill::source).
namespace oom_killer {
inline constexpr std::string_view kKernel = "kernel";
inline constexpr std::string_view kSystemdOomd = "systemd-oomd";
inline constexpr std::string_view kOomd = "oomd";
}  // namespace oom_killer

struct BreakingItem {
  std::string_view kind;  // a breaking_kind
  VerdictLevel level = VerdictLevel::kNone;
  // What breaks: "pid 4242 (zig-test)", a cgroup path, "node", "the canary's allocator".
  std::string subject;
  std::optional<int> pid;
  std::string comm;
  // map_areas: the process's memory cgroup; cgroup_limit: the cgroup; oom_kill: the victim's
  // cgroup ("" when unknown), while `subject` is the scope whose limit killed ("node" for a
  // global OOM).
  std::string cgroup;
  // The figure and the wall it runs into, in the figure's unit (map areas, bytes, kills), and
  // value / limit where that means something.
  double value = 0;
  double limit = 0;
  std::optional<double> ratio;
  // oom_kill: who killed (an oom_killer name) and what counted it ("ebpf", "memory.events",
  // "memory.oom_control", "vmstat", "xattr"); empty for the other kinds.
  std::string_view source;
  std::string_view counted_by;
  std::string explanation;  // one sentence a person on call can act on

  bool operator==(const BreakingItem&) const = default;
};

struct BreakingVerdict {
  VerdictLevel level = VerdictLevel::kNone;  // the highest of the items'
  // Highest level first, then the nearest to its wall; at most the configured cap.
  std::vector<BreakingItem> items;
  std::size_t dropped_items = 0;  // beyond the cap (lower levels)
  // How long an OOM kill stays an item after it happened (the model's window), in seconds.
  double oom_window_seconds = 0;

  bool operator==(const BreakingVerdict&) const = default;
};

}  // namespace memdiag
