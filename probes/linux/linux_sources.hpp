// The node sources of a Linux host, registered explicitly by name. The names are also the
// keys of the `sources:` config section.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/source.hpp"
#include "probes/linux/cgroup_tree.hpp"

namespace memdiag {

struct KernelPaths {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
  bool operator==(const KernelPaths&) const = default;
};

// processes: the eBPF task iterator, /proc, or the iterator when it loads and /proc otherwise.
enum class ProcessScanMode { kAuto, kBpfIter, kProcfs };

// canary: the daemon's page-fault canary and optional ones inside chosen cgroups (issue 6).
struct CanarySettings {
  std::chrono::milliseconds interval{10000};
  std::size_t working_set_bytes = 16u << 20;
  std::size_t ceiling_bytes = 64u << 20;
  double backoff_psi_full = 10.0;  // percent, node memory PSI full avg10
  std::vector<std::string> cgroups;  // memory cgroup paths to run a child canary in
  bool operator==(const CanarySettings&) const = default;
};

// Per-source settings from the `sources:` config section.
struct SourceOptions {
  // Slow-changing sources (vm sysctls change only by an administrator's hand) re-read the
  // kernel at most this often and serve the last values in between; 0 = every sample.
  std::chrono::milliseconds refresh_interval{0};
  // cgroup: how far and what to walk, and how many cgroups to export at most.
  CgroupDiscoveryOptions cgroup_discovery;
  std::size_t max_cgroups = 500;
  // v1: how many of the exported cgroups (most important first) get pressure_level and OOM
  // eventfds: four descriptors each.
  std::size_t max_watched_cgroups = 100;
  // reclaim_stall (eBPF): where the kernel's BTF is ("" = /sys/kernel/btf/vmlinux), whether
  // classic tracepoints may stand in when tp_btf programs cannot attach, and how long a removed
  // cgroup's stall histograms stay exported before they are folded into the node totals.
  // `max_cgroups` caps its cgroups as it caps the cgroup source's.
  std::string btf_path;
  bool tracefs_fallback = true;
  std::chrono::milliseconds retain_removed{300000};
  // processes: which scanner, and what to export (see probes/core/process_selection.hpp;
  // `max_cgroups` caps its per-cgroup sums).
  ProcessScanMode process_scan = ProcessScanMode::kAuto;
  std::size_t top_processes = 10;
  double map_areas_threshold = 0.8;
  std::size_t max_above_threshold = 100;
  CanarySettings canary;
  // Equal settings: a reload keeps the running source (see Sampler::SourcePlan).
  bool operator==(const SourceOptions&) const = default;
};

const std::vector<std::string_view>& linux_source_names();

// Whether the source has a refresh_interval option (the others read every sample).
bool linux_source_has_refresh_interval(std::string_view name);

// nullptr for an unknown name.
std::unique_ptr<Source> make_linux_source(std::string_view name, const KernelPaths& paths,
                                          const SourceOptions& options = {});

}  // namespace memdiag
