// SPDX-License-Identifier: Apache-2.0
// Kept-open descriptors of cgroup files, per cgroup. Opening a cgroup file costs a path walk
// through kernfs (8-16 us on the nested VMs we measured, more than the read itself); keeping
// the descriptor and pread()ing from offset 0 makes each later sample one syscall per file
// (kernfs regenerates the content on every read at offset 0).
//
// Bounded: at most `max_open_files` descriptors; beyond that a file is read the old way
// (open, read, close). A cgroup not seen in a sample has its descriptors closed at the end of
// that sample, so a removed cgroup pins nothing for longer than one interval. A file found
// missing (v1 without swap accounting has no memsw files) is not retried every sample, only
// every `kMissingRetrySamples` samples (v2 adds memory.* files to a cgroup when a parent
// enables the controller, which makes no event we could wait for).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "probes/core/expected.hpp"

namespace memdiag {

// Every file the cgroup reader reads, whatever its name in each version.
enum class CgroupFile : std::uint8_t {
  kUsage,
  kLimit,
  kPressure,
  kHigh,
  kLow,
  kSwap,
  kEvents,
  kFailcnt,
  kMemswUsage,
  kMemswLimit,
  kOomControl,
  kStat,
  kCount
};

class CgroupFileCache {
 public:
  static constexpr std::uint32_t kMissingRetrySamples = 16;

  // The descriptors of one cgroup's files.
  struct Entry {
    static constexpr int kNotOpen = -1;
    static constexpr int kMissing = -2;
    std::array<int, static_cast<std::size_t>(CgroupFile::kCount)> fds;
    std::uint64_t seen = 0;  // the sample that last used it
    Entry() { fds.fill(kNotOpen); }
  };

  enum class Result {
    kOk,
    kMissing,  // no such file (or its cgroup is being removed): a field left absent
    kGone,     // the descriptor's cgroup was removed since it was opened (ENODEV)
    kFailed,   // anything else: `error()` says what
  };

  explicit CgroupFileCache(std::size_t max_open_files);
  ~CgroupFileCache();
  CgroupFileCache(const CgroupFileCache&) = delete;
  CgroupFileCache& operator=(const CgroupFileCache&) = delete;

  // The entry of the cgroup at `key` (its path), marked as used in the current sample. The
  // reference stays valid until end_sample() runs in a sample that did not use it.
  Entry& entry(const std::string& key);
  // Marks an entry obtained earlier as used in the current sample.
  void touch(Entry& entry) const { entry.seen = sample_; }

  // Reads `dir/name` through `entry`'s descriptor for `file`. On kOk the content is in
  // `content()` until the next read; on kFailed `error()` names the path and the errno text.
  Result read(Entry& entry, CgroupFile file, const std::string& dir, const char* name);
  std::string_view content() const { return content_; }
  const std::string& error() const { return error_; }

  // Closes the entries not used in this sample and starts the next one.
  void end_sample();
  // Closes everything (the hierarchy changed).
  void clear();

  std::size_t open_files() const { return open_files_; }
  std::size_t entries() const { return entries_.size(); }

 private:
  void close_entry(Entry& entry);
  Result read_descriptor(int fd, const std::string& dir, const char* name);
  Result read_once(const std::string& dir, const char* name);
  Result fail(const std::string& dir, const char* name, int err);

  std::size_t max_open_files_;
  std::size_t open_files_ = 0;
  std::uint64_t sample_ = 1;
  std::unordered_map<std::string, Entry> entries_;
  std::string path_;
  std::string buffer_;
  std::string_view content_;
  std::string error_;
};

// How many descriptors the cgroup files may keep open in this process: half of what
// RLIMIT_NOFILE leaves after a reserve for everything else (HTTP connections, other sources),
// at most `ceiling`.
std::size_t cgroup_descriptor_budget(std::size_t ceiling = 32768);

}  // namespace memdiag
