// SPDX-License-Identifier: Apache-2.0
// Reclaim-stall tracing, user-space half: loads reclaim_stall.bpf.c (CO-RE, one
// object for every kernel with BTF), attaches it, and reads its in-kernel histograms back as
// plain data. Loading costs tens of milliseconds once, in a short-lived child process
// (bpf_loader_child.hpp) so libbpf's parse of the kernel's BTF never weighs on the daemon; the
// probe keeps the descriptors of the maps, programs and links it sent back. A read costs a few
// map syscalls.
//
// Each stall kind (and the OOM victim program) attaches on its own, tp_btf first, then the
// classic tracepoint: a kernel without one kind's tracepoints (mm_vmscan_throttled before 5.16)
// traces the others, and says which kind is missing and why.
//
// Errors are values naming the cause ("no BTF at ...", "permission denied ...",
// "tracepoint X missing ..."); libbpf's own output never reaches stderr.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/bpf/bpf_loader_child.hpp"
#include "probes/bpf/libbpf_log.hpp"
#include "probes/bpf/reclaim_stall_units.hpp"
#include "probes/core/expected.hpp"
#include "probes/core/log2_distribution.hpp"
#include "probes/core/stall_kind.hpp"
#include "probes/linux/unique_fd.hpp"

namespace memdiag {

enum class AttachMode : std::uint8_t {
  kTpBtf,       // BTF-typed raw tracepoints: needs kernel BTF, no tracefs
  kTracepoint,  // classic tracepoints through tracefs
};
std::string_view to_string(AttachMode mode);  // "tp_btf", "tracepoint"

struct ProbeOptions {
  // BTF used for CO-RE relocations. Empty: the kernel's own, /sys/kernel/btf/vmlinux. A path
  // that does not exist makes open() fail naming it. With a custom file on a kernel without
  // /sys/kernel/btf/vmlinux, tp_btf cannot attach and only the tracepoint fallback can work.
  std::string btf_path;
  // Use classic tracepoints for the kinds whose tp_btf programs cannot be loaded or attached.
  bool allow_tracefs_fallback = true;
  // Skip tp_btf and go straight to classic tracepoints (to test or diagnose the fallback).
  bool force_tracepoint = false;
  // libbpf's warnings and info lines during open(), one line per call. Empty: dropped.
  LibbpfLogFn log;
  // Tests: kinds to treat as missing from this kernel, through the same paths a kernel without
  // their tracepoints takes: their tracepoints are looked for in the kernel's BTF and in tracefs
  // under names that do not exist. tp_btf_unavailable_for_test: only the tp_btf half, so the
  // kind falls back.
  std::vector<StallKind> unavailable_for_test;
  std::vector<StallKind> tp_btf_unavailable_for_test;
  // Tests: kinds whose tp_btf programs pass the BTF probe but fail libbpf's load (they are
  // resolved as kernel functions of the tracepoints' names, which do not exist), as a program
  // the verifier or libbpf refuses on some kernel would: the load is bisected to the kind.
  std::vector<StallKind> tp_btf_load_fails_for_test;
};

// How one unit (a stall kind, or the OOM victim program) ended up after open().
struct UnitAttachment {
  bool attached = false;
  AttachMode mode = AttachMode::kTpBtf;  // when attached
  // When not attached: why, per mode tried ("tp_btf: ...; tracepoint: ..."). Fixed at open(),
  // so the same text every time it is asked for.
  std::string reason;
};

struct StallHistogram {
  StallKind kind = StallKind::kDirect;
  // Memory cgroup of the stalled task: the kernfs id of its cgroup in the hierarchy the memory
  // controller is on, i.e. stat(cgroup dir).st_ino (v1 memory dir, or the v2 dir). 1 = root.
  std::uint64_t memcg_id = 0;
  // Per-slot (not cumulative) counts; bounds in probes/core/log2_layout.h.
  Log2Slots buckets{};
  // The kernel's own counters. Read while events arrive, sum(buckets) may exceed count by
  // the few updates in flight (buckets are bumped first); they agree once events stop.
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;
};

struct OomVictims {
  std::uint64_t memcg_id = 0;  // memory cgroup of the killed task, as in StallHistogram
  std::uint64_t count = 0;
};

// One of the last OOM victims (the kernel keeps a ring of MEMDIAG_RECENT_VICTIMS).
struct RecentOomVictim {
  std::uint64_t sequence = 0;  // its number since the probe loaded, from 1
  std::uint64_t memcg_id = 0;
  int pid = 0;
  std::string comm;
};

// Events not counted, by reason. Non-zero means the histograms under-count.
struct StallDrops {
  std::uint64_t histogram_full = 0;  // no room for a new {kind, memcg} key
  std::uint64_t starts_full = 0;     // too many threads stalled at once
  std::uint64_t victims_full = 0;    // no room for a new OOM victim memcg
  std::uint64_t victim_unknown = 0;  // OOM victim pid no longer resolvable
  std::uint64_t total() const { return histogram_full + starts_full + victims_full + victim_unknown; }
};

// Cumulative since open(). Order of entries is the kernel's hash order: unspecified.
struct ReclaimStallReading {
  std::vector<StallHistogram> histograms;
  std::vector<OomVictims> oom_victims;
  std::vector<RecentOomVictim> recent_victims;  // oldest first; empty without mmap-able .bss
  StallDrops drops;
  AttachMode mode = AttachMode::kTpBtf;  // as ReclaimStallProbe::mode()
};

// Kernel-side cost of one program: run_count/run_time_ns stay 0 unless
// sysctl kernel.bpf_stats_enabled=1 (the kernel only times programs while it is on).
struct BpfProgramStats {
  std::string name;
  std::uint32_t id = 0;  // the kernel's program id (bpftool prog show id N)
  std::uint64_t run_count = 0;
  std::uint64_t run_time_ns = 0;
};

// open()'s work in the loader child (bpf_loader_child.hpp), by name: the options come as the
// strings open() made of them, libbpf's lines go back in the answer.
inline constexpr std::string_view kReclaimStallLoader = "reclaim_stall";
BpfHandoff load_reclaim_stall_for_parent(const std::vector<std::string>& args);

class ReclaimStallProbe {
 public:
  // Loads and attaches in a child process, each unit on its own: tp_btf first (unless
  // force_tracepoint), then classic tracepoints if allowed. Succeeds when at least one unit
  // attached; see kind() and oom_victims() for the others. Needs CAP_BPF + CAP_PERFMON (root;
  // without them, an error whatever the units); tracepoints also tracefs.
  static Expected<std::unique_ptr<ReclaimStallProbe>> open(const ProbeOptions& options = {});

  ~ReclaimStallProbe();  // closes the links (detaching the programs) and the maps
  ReclaimStallProbe(const ReclaimStallProbe&) = delete;
  ReclaimStallProbe& operator=(const ReclaimStallProbe&) = delete;

  // kTracepoint as soon as one attached unit needed the classic tracepoint (tracefs is then
  // needed), kTpBtf otherwise.
  AttachMode mode() const { return mode_; }
  const UnitAttachment& kind(StallKind kind) const { return units_[static_cast<std::size_t>(kind)]; }
  const UnitAttachment& oom_victims() const { return units_[kOomVictimsUnit]; }
  // The units not attached, each with its reason: "throttled (tp_btf: ...; tracepoint: ...)",
  // comma-separated; empty when everything is traced. The same text as long as the probe lives.
  std::string not_attached() const;

  // Everything counted since open(). Walks a map only if the kernel side changed it since the
  // last read (a generation counter read from shared memory), so on a quiet node this is a
  // copy of the previous result. Not thread-safe with itself.
  Expected<ReclaimStallReading> read();

  // Deletes one memory cgroup's histograms and OOM count (for cgroups that are gone: ids are
  // not reused while the kernel runs, but dead keys would fill the maps). Absent is fine.
  // Which of them are gone from the kernel maps (deleted, or not there at all): a caller that
  // keeps the counts elsewhere must move exactly those. Every key is tried even when one fails.
  struct Forgotten {
    std::array<bool, kStallKindCount> histograms{};
    bool oom_victims = false;
    std::string error;  // the first failure; empty when everything is gone
    bool all() const { return error.empty(); }
  };
  Forgotten forget(std::uint64_t memcg_id);

  // Per attached program (see BpfProgramStats for when the figures are non-zero).
  Expected<std::vector<BpfProgramStats>> program_stats() const;

  // What the loading child cost: its peak RSS (it began as a copy of this process) and the
  // time from fork to its answer.
  long loader_peak_rss_kib() const { return loader_peak_rss_kib_; }
  std::chrono::microseconds load_time() const { return load_time_; }

 private:
  ReclaimStallProbe() = default;

  Status read_histograms();
  Status read_victims();
  // The ring of the last victims from the object's mapped global data (the skeleton's .bss).
  void read_recent_victims(const void* global_data);
  Status read_drops();

  UniqueFd stall_hist_;
  UniqueFd oom_victims_;
  UniqueFd drops_;
  // The object's .bss (the generation counters), mapped read-only from its map; null on
  // kernels without mmap-able global data (before 5.5).
  const void* bss_ = nullptr;
  std::size_t bss_size_ = 0;
  std::vector<std::pair<std::string, UniqueFd>> programs_;  // name, descriptor; loaded ones only
  std::vector<UniqueFd> links_;                             // one per attached program
  std::array<UnitAttachment, kReclaimStallUnits> units_;
  AttachMode mode_ = AttachMode::kTpBtf;
  // Scratch for batched map reads, kept between reads to avoid reallocating.
  std::vector<unsigned char> keys_;
  std::vector<unsigned char> values_;
  // The last reading, and the kernel generations it reflects.
  ReclaimStallReading last_;
  bool last_valid_ = false;
  std::uint64_t last_hist_generation_ = 0;
  std::uint64_t last_victim_generation_ = 0;
  long loader_peak_rss_kib_ = 0;
  std::chrono::microseconds load_time_{0};
};

}  // namespace memdiag
