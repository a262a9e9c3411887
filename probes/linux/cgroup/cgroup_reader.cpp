// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_reader.hpp"

#include <sys/stat.h>

#include "probes/linux/cgroup/cgroup_values.hpp"
#include "probes/linux/node/pressure_parser.hpp"

namespace memdiag {
namespace {

struct StatKey {
  std::string_view file_key;   // as memory.stat spells it in this version
  std::string_view canonical;  // exported spelling (v2's)
  bool counter;
};

// The reclaim- and thrash-related keys. v2 memory.stat is hierarchical; for v1 the total_*
// (hierarchical) keys are taken so both versions mean the same thing.
constexpr StatKey kV2Keys[] = {
    {"anon", "anon", false},
    {"file", "file", false},
    {"inactive_file", "inactive_file", false},
    {"kernel", "kernel", false},
    {"kernel_stack", "kernel_stack", false},
    {"pagetables", "pagetables", false},
    {"sock", "sock", false},
    {"shmem", "shmem", false},
    {"file_mapped", "file_mapped", false},
    {"file_dirty", "file_dirty", false},
    {"file_writeback", "file_writeback", false},
    {"slab_reclaimable", "slab_reclaimable", false},
    {"slab_unreclaimable", "slab_unreclaimable", false},
    {"workingset_refault_anon", "workingset_refault_anon", true},
    {"workingset_refault_file", "workingset_refault_file", true},
    {"workingset_activate_anon", "workingset_activate_anon", true},
    {"workingset_activate_file", "workingset_activate_file", true},
    {"workingset_restore_anon", "workingset_restore_anon", true},
    {"workingset_restore_file", "workingset_restore_file", true},
    {"pgscan", "pgscan", true},
    {"pgsteal", "pgsteal", true},
    {"pgscan_direct", "pgscan_direct", true},
    {"pgsteal_direct", "pgsteal_direct", true},
    {"pgscan_kswapd", "pgscan_kswapd", true},
    {"pgsteal_kswapd", "pgsteal_kswapd", true},
    {"pgfault", "pgfault", true},
    {"pgmajfault", "pgmajfault", true},
};

constexpr StatKey kV1Keys[] = {
    {"total_rss", "anon", false},
    {"total_cache", "file", false},
    {"total_inactive_file", "inactive_file", false},
    {"total_shmem", "shmem", false},
    {"total_mapped_file", "file_mapped", false},
    {"total_dirty", "file_dirty", false},
    {"total_writeback", "file_writeback", false},
    {"total_swap", "swap", false},
    {"total_workingset_refault_anon", "workingset_refault_anon", true},
    {"total_workingset_refault_file", "workingset_refault_file", true},
    {"total_pgfault", "pgfault", true},
    {"total_pgmajfault", "pgmajfault", true},
};

template <std::size_t N>
const StatKey* find_key(const StatKey (&keys)[N], std::string_view name) {
  for (const auto& k : keys) {
    if (k.file_key == name) return &k;
  }
  return nullptr;
}

}  // namespace

void CgroupReader::note_malformed(Outcome& outcome, const std::string& dir, const char* name, const std::string& why) {
  if (outcome.malformed_files++ == 0) outcome.first_error = dir + "/" + name + ": " + why;
}

bool CgroupReader::read_file(CgroupFile file, const std::string& dir, const char* name, Outcome& outcome) {
  switch (files_.read(*entry_, file, dir, name)) {
    case CgroupFileCache::Result::kOk:
      content_ = files_.content();
      return true;
    case CgroupFileCache::Result::kMissing:
      if (file == CgroupFile::kUsage) usage_missing_ = true;
      return false;
    case CgroupFileCache::Result::kGone:
      gone_ = true;
      return false;
    case CgroupFileCache::Result::kFailed:
      if (outcome.malformed_files++ == 0) outcome.first_error = files_.error();
      return false;
  }
  return false;
}

CgroupReader::Outcome CgroupReader::read_core(CgroupVersion version, Files& files, bool is_root,
                                              const std::string& dir, const std::string& psi_dir, CgroupSample& out) {
  Outcome outcome;
  files_.touch(files);
  entry_ = &files;
  gone_ = false;
  usage_missing_ = false;
  if (version == CgroupVersion::kV1) {
    read_v1_core(dir, out, outcome);
  } else {
    read_v2_core(dir, out, outcome);
  }
  // A removed cgroup shows as a descriptor gone stale or, when its files were never open, as
  // a missing usage file. Only the root legitimately has none (v2), so only then look.
  if (gone_ || (usage_missing_ && !is_root)) {
    struct stat st{};
    if (gone_ || ::stat(dir.c_str(), &st) != 0) {
      outcome.vanished = true;
      return outcome;
    }
  }
  read_pressure(psi_dir.empty() ? dir : psi_dir, out, outcome);
  return outcome;
}

void CgroupReader::read_details(CgroupVersion version, Files& files, const std::string& dir, CgroupSample& out,
                                Outcome& outcome) {
  // A cgroup removed since read_core just leaves these absent: its files are missing, not bad.
  entry_ = &files;
  if (version == CgroupVersion::kV1) {
    read_v1_details(dir, out, outcome);
  } else {
    read_v2_details(dir, out, outcome);
  }
  read_stat(dir, version, out, outcome);
}

void CgroupReader::read_number(CgroupFile file, const std::string& dir, const char* name,
                               std::optional<std::uint64_t>& field, Outcome& outcome) {
  if (!read_file(file, dir, name, outcome)) return;
  auto v = parse_cgroup_u64(content_);
  if (v) {
    field = *v;
  } else {
    note_malformed(outcome, dir, name, v.error().message);
  }
}

void CgroupReader::read_limit(CgroupFile file, const std::string& dir, const char* name,
                              std::optional<std::uint64_t>& field, bool* limited, Outcome& outcome) {
  if (!read_file(file, dir, name, outcome)) return;
  auto v = parse_cgroup_limit(content_);
  if (!v) {
    note_malformed(outcome, dir, name, v.error().message);
    return;
  }
  field = *v;
  if (limited) *limited = v->has_value();
}

void CgroupReader::read_v2_core(const std::string& dir, CgroupSample& out, Outcome& outcome) {
  read_number(CgroupFile::kUsage, dir, "memory.current", out.usage_bytes, outcome);
  read_limit(CgroupFile::kLimit, dir, "memory.max", out.limit_bytes, &out.limited, outcome);
}

void CgroupReader::read_v2_details(const std::string& dir, CgroupSample& out, Outcome& outcome) {
  read_limit(CgroupFile::kHigh, dir, "memory.high", out.high_bytes, nullptr, outcome);
  // "max" protects everything: absent here
  read_limit(CgroupFile::kLow, dir, "memory.low", out.low_bytes, nullptr, outcome);
  read_number(CgroupFile::kSwap, dir, "memory.swap.current", out.swap_usage_bytes, outcome);
  if (read_file(CgroupFile::kEvents, dir, "memory.events", outcome)) {
    if (auto st = parse_flat_keyed(content_, keyed_); !st) {
      note_malformed(outcome, dir, "memory.events", st.error().message);
    } else {
      for (const auto& kv : keyed_) {
        for (std::size_t e = 0; e < kCgroupEventNames.size(); ++e) {
          if (kv.name == kCgroupEventNames[e]) out.events[e] = kv.value;
        }
      }
    }
  }
}

void CgroupReader::read_v1_core(const std::string& dir, CgroupSample& out, Outcome& outcome) {
  read_number(CgroupFile::kUsage, dir, "memory.usage_in_bytes", out.usage_bytes, outcome);
  read_limit(CgroupFile::kLimit, dir, "memory.limit_in_bytes", out.limit_bytes, &out.limited, outcome);
}

void CgroupReader::read_v1_details(const std::string& dir, CgroupSample& out, Outcome& outcome) {
  read_number(CgroupFile::kFailcnt, dir, "memory.failcnt", out.failcnt, outcome);
  read_number(CgroupFile::kMemswUsage, dir, "memory.memsw.usage_in_bytes", out.memsw_usage_bytes, outcome);
  read_limit(CgroupFile::kMemswLimit, dir, "memory.memsw.limit_in_bytes", out.memsw_limit_bytes, nullptr, outcome);
  if (read_file(CgroupFile::kOomControl, dir, "memory.oom_control", outcome)) {
    if (auto st = parse_flat_keyed(content_, keyed_); !st) {
      note_malformed(outcome, dir, "memory.oom_control", st.error().message);
    } else {
      for (const auto& kv : keyed_) {
        if (kv.name == "under_oom") out.under_oom = kv.value != 0;
        if (kv.name == "oom_kill") out.events[static_cast<int>(CgroupEvent::kOomKill)] = kv.value;
      }
    }
  }
}

void CgroupReader::read_stat(const std::string& dir, CgroupVersion version, CgroupSample& out, Outcome& outcome) {
  if (!read_file(CgroupFile::kStat, dir, "memory.stat", outcome)) return;
  if (auto st = parse_flat_keyed(content_, keyed_); !st) {
    note_malformed(outcome, dir, "memory.stat", st.error().message);
    return;
  }
  out.stat.clear();
  for (const auto& kv : keyed_) {
    const StatKey* key = version == CgroupVersion::kV2 ? find_key(kV2Keys, kv.name) : find_key(kV1Keys, kv.name);
    if (key) out.stat.push_back(CgroupStatValue{key->canonical, kv.value, key->counter});
  }
}

void CgroupReader::read_pressure(const std::string& dir, CgroupSample& out, Outcome& outcome) {
  if (!read_file(CgroupFile::kPressure, dir, "memory.pressure", outcome)) return;
  auto psi = parse_pressure(content_);
  if (psi) {
    out.pressure = *psi;
  } else {
    note_malformed(outcome, dir, "memory.pressure", psi.error().message);
  }
}

}  // namespace memdiag
