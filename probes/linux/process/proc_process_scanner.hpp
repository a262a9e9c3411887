// SPDX-License-Identifier: Apache-2.0
// Per-process map counts and memory from /proc, for when the eBPF task iterator
// cannot load: for every numeric directory of /proc, PID/status (name, RSS split, swap,
// virtual size), PID/maps (its lines are the mappings; [vsyscall] is not one) and PID/cgroup
// (the memory cgroup). Kernel threads (no VmSize) are skipped; a process that exits while it
// is read is counted as vanished, which is normal. A process whose status or maps cannot be
// read or parsed is left out and counted; one whose cgroup file fails is kept with
// cgroup_key 0 (its map count matters more than its label) and counted.
//
// Allocation-free once warm: the directory is listed with getdents64 into a fixed buffer, files
// are opened relative to the /proc descriptor with paths formatted on the stack and read into
// fixed buffers; cgroup paths are interned once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "probes/core/process_record.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"

namespace memdiag {

class ProcProcessScanner final : public ProcessScanner {
 public:
  // procfs_root: "/proc" or a fixture tree laid out like it. memory_version: which line of
  // PID/cgroup names the memory cgroup; none (no memory hierarchy found): cgroups are not read
  // and every record's cgroup is unknown.
  ProcProcessScanner(std::string procfs_root, std::optional<CgroupVersion> memory_version);
  ~ProcProcessScanner() override;
  ProcProcessScanner(const ProcProcessScanner&) = delete;
  ProcProcessScanner& operator=(const ProcProcessScanner&) = delete;

  std::string_view mode() const override { return "procfs"; }
  Status scan(std::vector<ProcessMaps>& out) override;
  const ProcessScanProblems& problems() const override { return problems_; }
  const std::string* cgroup_path(std::uint64_t cgroup_key) const override;

 private:
  enum class Problem { kNone, kVanished, kUnreadable, kMalformed };
  struct Buffers;

  void scan_process(int pid, std::vector<ProcessMaps>& out);
  // These return kNone on success, else the problem they counted in problems_.
  Problem read_small_file(int pid, std::string_view file, char* buffer, std::size_t capacity,
                          std::string_view& text);
  Problem count_maps(int pid, std::uint32_t& map_count);
  Problem note_errno(int pid, std::string_view file, int err);
  Problem note(Problem problem, int pid, std::string_view file, std::string_view why);
  std::uint64_t intern_cgroup(std::string_view path);
  void forget_unused_cgroups();

  // Heterogeneous lookup: a path seen before is found from the string_view into the read
  // buffer, without building a std::string.
  struct PathHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::string procfs_root_;
  std::optional<CgroupVersion> memory_version_;
  ProcessScanProblems problems_;
  int proc_fd_ = -1;
  std::unique_ptr<Buffers> buffers_;  // fixed read buffers, ~100 KiB: not on the caller's stack
  // Interned memory cgroup paths: cgroup_key k is *cgroup_paths_[k - 1], a key of the map
  // (its nodes do not move). The scan that last saw each path lets the table be rebuilt when
  // cgroups come and go (pods), so it stays bounded by about twice the live ones.
  struct InternedCgroup {
    std::uint64_t key;
    std::uint64_t last_scan;
  };
  std::unordered_map<std::string, InternedCgroup, PathHash, std::equal_to<>> cgroup_keys_;
  std::vector<const std::string*> cgroup_paths_;
  std::uint64_t scan_number_ = 0;
};

}  // namespace memdiag
