// SPDX-License-Identifier: Apache-2.0
// The parts of a process's private commit that are not promises likely to come due, read from
// /proc/PID/maps. VmData counts every private writable mapping, and the kernel charges each to
// Committed_AS, but two kinds are rarely paid in full:
//   - thread stacks: glibc and musl map each thread a stack of RLIMIT_STACK (8 MiB by default)
//     with a PROT_NONE guard below it; a thread touches a few pages of it. A process of 1,000
//     threads "promises" 8 GiB it will never draw.
//   - private writable file mappings (a library's .data, a file mapped MAP_PRIVATE to patch):
//     their pages are the file's until written, and only what is written becomes anon memory.
// /proc/PID/maps does not label thread stacks (the kernel dropped [stack:TID] in 4.5): a stack
// is told by its shape, an anonymous read-write mapping directly above an anonymous PROT_NONE
// guard of at most kMaxGuardBytes. A malloc arena grows the other way (its PROT_NONE reserve is
// above the used part), so it does not take that shape; another program's guarded buffer may.
// Both kinds are counted whole: what of them is resident is in RssAnon already, so a promise
// less these errs low by the touched stack pages and the written file pages (small next to the
// rest). Pure parsing apart from read_promise_not_due(); errors as values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag {

struct PromiseNotDue {
  std::uint64_t thread_stack_bytes = 0;
  std::uint64_t private_file_bytes = 0;
  std::uint64_t mappings = 0;  // lines read

  std::uint64_t total() const { return thread_stack_bytes + private_file_bytes; }
  bool operator==(const PromiseNotDue&) const = default;
};

// The largest PROT_NONE mapping taken for a stack guard (glibc's default is a page;
// pthread_attr_setguardsize may ask for more).
inline constexpr std::uint64_t kMaxGuardBytes = 1 << 20;

// Fed /proc/PID/maps a line at a time (the file of a process near vm.max_map_count is
// megabytes: read_promise_not_due() streams it).
class MapsClassifier {
 public:
  // One line without its newline. An error for a line that is not a maps line; the classifier
  // is then no longer usable.
  Status add_line(std::string_view line);
  const PromiseNotDue& result() const { return result_; }

 private:
  PromiseNotDue result_;
  std::uint64_t previous_end_ = 0;
  bool previous_is_guard_ = false;
};

// A whole maps text (tests and the fuzzer): an error for a truncated last line or garbage.
Expected<PromiseNotDue> classify_maps(std::string_view text);

// Reads and classifies `path` (a /proc/PID/maps) in chunks; gives up past max_lines.
Expected<PromiseNotDue> read_promise_not_due(const std::string& path, std::uint64_t max_lines = 1 << 20);

}  // namespace memdiag
