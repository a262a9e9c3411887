// SPDX-License-Identifier: Apache-2.0
// Reads one memory cgroup's files into a CgroupSample, for either hierarchy version. A file
// that is missing is a field left absent (the root cgroup has no memory.current; v1 without
// swap accounting has no memsw files; the cgroup may be removed while we read it); a file that
// does not parse is counted and left absent too, so one bad file never hides the others.
// Descriptors stay open between samples (CgroupFileCache): call end_sample() after each.
#pragma once

#include <string>
#include <vector>

#include "probes/core/cgroup_section.hpp"
#include "probes/linux/cgroup/cgroup_file_cache.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/flat_keyed_parser.hpp"

namespace memdiag {

class CgroupReader {
 public:
  struct Outcome {
    bool vanished = false;            // the directory is gone: drop the cgroup
    std::size_t malformed_files = 0;  // files present but unparsable
    std::string first_error;          // the first of them, for the log
  };

  explicit CgroupReader(std::size_t max_open_files = cgroup_descriptor_budget()) : files_(max_open_files) {}

  // The descriptors of the cgroup at `path` (its path in the hierarchy), to pass to the reads.
  // Valid for as long as every sample calls read_core() with it.
  using Files = CgroupFileCache::Entry;
  Files& files_for(const std::string& path) { return files_.entry(path); }

  // What ranking and the limit sum need, read for every discovered cgroup: usage, hard limit
  // and memory.pressure. `dir`: the cgroup's directory; `psi_dir`: where its memory.pressure
  // lives ("" = in `dir` for v2; the cgroup2 twin in hybrid mode, which may not exist).
  // `is_root`: the hierarchy's root, which has no usage file in v2.
  Outcome read_core(CgroupVersion version, Files& files, bool is_root, const std::string& dir,
                    const std::string& psi_dir, CgroupSample& out);

  // The rest (events, memory.stat, swap, v1 failcnt and oom_control, v2 high/low), read only
  // for the cgroups the cap keeps: at 2,000 cgroups and a cap of 500 that saves three quarters
  // of the reads, which are most of the cost. After read_core() in the same sample.
  void read_details(CgroupVersion version, Files& files, const std::string& dir, CgroupSample& out,
                    Outcome& outcome);

  // After every sample: closes the descriptors of cgroups that were not read.
  void end_sample() { files_.end_sample(); }
  // The hierarchy changed (re-probe): forget every descriptor.
  void reset() { files_.clear(); }
  std::size_t open_files() const { return files_.open_files(); }

 private:
  // Reads `dir/name` of the current cgroup; false if missing or (counted in `outcome`)
  // unreadable. A cgroup removed since its descriptor was opened sets `gone_`.
  bool read_file(CgroupFile file, const std::string& dir, const char* name, Outcome& outcome);
  void read_number(CgroupFile file, const std::string& dir, const char* name, std::optional<std::uint64_t>& field,
                   Outcome& outcome);
  // nullopt in `field` (and false in `limited`) for "max" and v1's unlimited.
  void read_limit(CgroupFile file, const std::string& dir, const char* name, std::optional<std::uint64_t>& field,
                  bool* limited, Outcome& outcome);
  void read_v1_core(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void read_v1_details(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void read_v2_core(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void read_v2_details(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void read_stat(const std::string& dir, CgroupVersion version, CgroupSample& out, Outcome& outcome);
  void read_pressure(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void note_malformed(Outcome& outcome, const std::string& dir, const char* name, const std::string& why);

  CgroupFileCache files_;
  CgroupFileCache::Entry* entry_ = nullptr;  // the cgroup being read
  bool gone_ = false;
  bool usage_missing_ = false;
  std::string_view content_;
  std::vector<KeyedValue> keyed_;
};

}  // namespace memdiag
