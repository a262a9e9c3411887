// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/reclaim_stall_source.hpp"

#include <utility>

namespace memdiag {

ReclaimStallSource::ReclaimStallSource(const KernelPaths& paths, const ReclaimStallOptions& options, Clock now)
    : paths_(paths),
      options_(options),
      mountinfo_(paths.procfs + "/self/mountinfo"),
      attribution_(options),
      now_(std::move(now)) {}

Status ReclaimStallSource::probe() {
  if (!probe_) {
    const auto now = now_();
    if (load_failure_ && now - load_failed_at_ < kRetryLoadAfter) return *load_failure_;
    ++load_attempts_;
    ProbeOptions probe_options;
    probe_options.btf_path = options_.btf_path;
    probe_options.allow_tracefs_fallback = options_.tracefs_fallback;
    probe_options.unavailable_for_test = options_.unavailable_for_test;
    auto opened = ReclaimStallProbe::open(probe_options);
    if (!opened) {
      load_failure_ = opened.error();
      load_failed_at_ = now;
      return opened.error();
    }
    probe_ = std::move(opened).value();
    load_failure_.reset();
  }
  // A kind this kernel cannot trace stays so while the probe lives: the same text every time,
  // so the sampler logs it once.
  degraded_.clear();
  if (std::string missing = probe_->not_attached(); !missing.empty()) {
    degraded_ = "not traced on this kernel: " + missing;
  }
  // Without a memory hierarchy the stalls still add up for the node; only names are missing.
  auto found = find_memory_hierarchy(paths_, mountinfo_);
  if (found) {
    hierarchy_ = std::move(found).value();
  } else {
    hierarchy_.reset();
    if (!degraded_.empty()) degraded_ += "; ";
    degraded_ += "stalls are not attributed to cgroups: " + found.error().message;
  }
  return Ok{};
}

Status ReclaimStallSource::sample(Snapshot& out) {
  auto read = probe_->read();
  if (!read) return read.error();
  const ReclaimStallReading& reading = *read;
  const auto now = now_();
  if (hierarchy_) ids_.update(hierarchy_->root, now);

  ReclaimStallSection section = attribution_.attribute(
      reading, ids_, now, [this](std::uint64_t id) { return probe_->forget(id); });
  section.attach_mode = to_string(reading.mode);
  for (std::size_t k = 0; k < kStallKindCount; ++k) {
    const UnitAttachment& kind = probe_->kind(static_cast<StallKind>(k));
    section.kind_modes[k] = kind.attached ? to_string(kind.mode) : std::string_view{};
  }
  const UnitAttachment& oom = probe_->oom_victims();
  section.oom_victims_mode = oom.attached ? to_string(oom.mode) : std::string_view{};
  section.dropped_events = reading.drops.total();
  out.reclaim_stall = std::move(section);
  return Ok{};
}

std::unique_ptr<Source> make_reclaim_stall_source(const KernelPaths& paths, const ReclaimStallOptions& options) {
  return std::make_unique<ReclaimStallSource>(paths, options);
}

}  // namespace memdiag
