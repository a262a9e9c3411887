// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/vm_sysctl_source.hpp"

#include "probes/linux/text_scan.hpp"

namespace memdiag {

const std::vector<std::string_view>& VmSysctlSource::known_sysctls() {
  // Single-integer sysctls only (lowmem_reserve_ratio and friends print several values).
  static const std::vector<std::string_view> kNames = {
      "overcommit_memory",      "overcommit_ratio",        "overcommit_kbytes",
      "max_map_count",          "min_free_kbytes",         "watermark_scale_factor",
      "watermark_boost_factor", "swappiness",              "vfs_cache_pressure",
      "dirty_ratio",            "dirty_background_ratio",  "dirty_bytes",
      "dirty_background_bytes", "admin_reserve_kbytes",    "user_reserve_kbytes",
      "zone_reclaim_mode",      "page-cluster",            "oom_kill_allocating_task",
      "panic_on_oom",           "nr_hugepages",            "nr_overcommit_hugepages",
      "compaction_proactiveness", "extfrag_threshold",     "min_unmapped_ratio",
      "min_slab_ratio",
  };
  return kNames;
}

VmSysctlSource::VmSysctlSource(const std::string& procfs_root, std::chrono::milliseconds refresh_interval)
    : directory_(procfs_root + "/sys/vm"), refresh_interval_(refresh_interval) {
  files_.reserve(known_sysctls().size());
  for (std::string_view name : known_sysctls()) files_.emplace_back(directory_ + "/" + std::string(name), KernelFile::Reads::kOneRecord, 64);  // "65530\n"
}

Status VmSysctlSource::probe() {
  for (const auto& f : files_) {
    if (f.exists()) return Ok{};
  }
  return make_error(directory_ + " has none of the vm sysctls");
}

Status VmSysctlSource::sample(Snapshot& out) {
  const auto now = std::chrono::steady_clock::now();
  if (!last_ || now - last_read_ >= refresh_interval_) {
    VmSysctlSection section;
    if (auto st = read_all(section); !st) {
      last_.reset();  // never serve values from before a failure
      return st;
    }
    last_ = std::move(section);
    last_policy_ = overcommit_policy_from(*last_);  // only when the values were read again
    last_read_ = now;
  }
  out.vm_sysctl = *last_;
  out.overcommit_policy = last_policy_;
  return Ok{};
}

Status VmSysctlSource::read_all(VmSysctlSection& section) {
  section.values.reserve(files_.size());
  for (std::size_t i = 0; i < files_.size(); ++i) {
    auto text = files_[i].read();
    if (!text) {
      if (!files_[i].exists()) continue;  // older kernel, or a NUMA-only knob
      return text.error();
    }
    const std::string_view digits = text::trim(*text);
    double value = 0;
    if (!digits.empty() && digits.front() == '-') {
      auto parsed = text::parse_i64(digits);
      if (!parsed) return make_error(files_[i].path() + ": " + parsed.error().message);
      value = static_cast<double>(*parsed);
    } else {
      auto parsed = text::parse_u64(digits);
      if (!parsed) return make_error(files_[i].path() + ": " + parsed.error().message);
      value = static_cast<double>(*parsed);
    }
    section.values.push_back(VmSysctlValue{known_sysctls()[i], value});
  }
  if (section.values.empty()) return make_error(directory_ + " has none of the vm sysctls");
  return Ok{};
}

std::optional<OvercommitPolicy> overcommit_policy_from(const VmSysctlSection& sysctls) {
  std::optional<double> mode, ratio, kbytes;
  for (const VmSysctlValue& v : sysctls.values) {
    if (v.name == "overcommit_memory") mode = v.value;
    if (v.name == "overcommit_ratio") ratio = v.value;
    if (v.name == "overcommit_kbytes") kbytes = v.value;
  }
  if (!mode || (*mode != 0 && *mode != 1 && *mode != 2)) return std::nullopt;
  OvercommitPolicy policy;
  policy.mode = static_cast<OvercommitMode>(static_cast<int>(*mode));
  policy.ratio_percent = ratio;
  if (kbytes && *kbytes > 0) policy.kbytes = static_cast<std::uint64_t>(*kbytes);
  return policy;
}

}  // namespace memdiag
