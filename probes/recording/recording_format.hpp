// SPDX-License-Identifier: Apache-2.0
// A recording: the snapshots a node produced, in order, in a compact file that
// `memdiagd diagnose --replay` runs the same models over offline. Written by `memdiagd record`,
// attached to tickets, and used by the model tests. Portable: Windows writes the same format.
//
// Layout. Integers are LEB128 varints unless said otherwise.
//   magic     "MEMDIAG-RECORDING\n" (18 bytes)
//   version   varint, kFormatVersion (a reader takes kOldestFormatVersion and later)
//   frames    each: a kind byte, a varint payload length, the payload
//     'H'  the header (RecordingHeader), once, first
//     'S'  one snapshot: every section a source fills, not what the models derive from them
//     'E'  the end mark: the number of snapshots, written when the recorder finished. A file
//          without it was cut short (the recorder was killed, the disk filled).
//
// A payload is a sequence of numbers in the fixed order of snapshot_fields.hpp, with strings
// and new field lists in between. Each number is written as the zigzag varint of its
// difference from the number at the same position in the previous frame: from one sample to the
// next most values stay put or move a little, so most numbers take one byte (a snapshot of this
// machine with its ~40 cgroups takes ~1.5 KiB). A string is a number too, its index in the
// file's table of strings (1-based, in order of first use); the index one past the table's end
// means a new string follows outside the numbers (varint length, bytes).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memdiag::recording {

inline constexpr std::string_view kMagic = "MEMDIAG-RECORDING\n";
// Version 2 added the Windows memory and paging sections and each process's peak
// resident size and page faults; a version 1 file reads as before, without them.
// Version 3 added the cgroup limit tree (effective limits, the limited cgroups with their
// headroom) and the process scan's RssAnon sum and uncharged reservations; older files read
// without them (the overcommit model then caps nothing and separates no copy-on-write sharing).
// Version 4 added the userspace OOM killers' marks per cgroup, the canary allocator's ceiling
// and the last OOM victims (pid, comm, cgroup).
// Version 5 added the thread stacks and private file mappings read from the largest promise
// holders' maps, per process and summed.
// Version 6 added the kills userspace OOM killers marked, caught as they were marked (so also
// those of cgroups removed before the next sample).
inline constexpr std::uint64_t kFormatVersion = 6;
inline constexpr std::uint64_t kOldestFormatVersion = 1;

enum class FrameKind : char { kHeader = 'H', kSnapshot = 'S', kEnd = 'E' };

// Bounds a reader holds a file to, so garbage cannot make it allocate without limit.
inline constexpr std::size_t kMaxFrameBytes = 64u << 20;   // one snapshot
inline constexpr std::size_t kMaxStringBytes = 1u << 20;   // one string
inline constexpr std::size_t kMaxStrings = 1u << 22;       // distinct strings in a file
// Entries of one list: above every cap a source has (max_cgroups is at most 100000), so garbage
// cannot ask for millions of cgroups from a large frame.
inline constexpr std::size_t kMaxListEntries = 1u << 17;

// Who made the recording, where and how often it sampled.
struct RecordingHeader {
  std::string recorder;  // "memdiagd 0.x (rev)"
  std::string host;      // node name
  std::string system;    // kernel release ("6.18.0-...") or Windows version
  std::chrono::milliseconds interval{0};
  std::chrono::system_clock::time_point started_at;

  bool operator==(const RecordingHeader&) const = default;
};

}  // namespace memdiag::recording
