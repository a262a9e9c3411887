// SPDX-License-Identifier: Apache-2.0
// The order in which a recording holds a snapshot's fields: one definition for both directions.
// Each `fields(a, x)` hands every member of x to the archive `a` in a fixed order; the writer's
// archive (recording_writer.cpp) reads them from a const object, the reader's
// (recording_reader.cpp) fills them in. A field added to a section is added here, kFormatVersion
// goes up, and the field is read only from files of that version on (`a.version()`), so older
// recordings still replay.
//
// The archive's vocabulary: integer, boolean, real, enumeration (with its largest value), text
// (owned string), interned (a string_view the reader points into the file's string table),
// time, optional, sequence (a vector), fixed (an array: its size is recorded and must match),
// schema (a FieldTable's field list, slot 0 meminfo, 1 vmstat, written only when it changes).
#pragma once

#include <concepts>
#include <type_traits>

#include "probes/core/snapshot.hpp"
#include "probes/recording/recording_format.hpp"

namespace memdiag::recording {

// S is T or const T: the writer visits const objects, the reader mutable ones.
template <class S, class T>
concept Is = std::same_as<std::remove_const_t<S>, T>;

template <class A, Is<RecordingHeader> S>
void fields(A& a, S& h) {
  a.text(h.recorder);
  a.text(h.host);
  a.text(h.system);
  a.duration(h.interval);
  a.time(h.started_at);
}

template <class A, Is<PsiLine> S>
void fields(A& a, S& p) {
  a.real(p.avg10);
  a.real(p.avg60);
  a.real(p.avg300);
  a.integer(p.total_us);
}

template <class A, Is<PsiResource> S>
void fields(A& a, S& r) {
  fields(a, r.some);
  a.optional(r.full, [&](auto& line) { fields(a, line); });
}

template <class A, Is<PressureSection> S>
void fields(A& a, S& p) {
  a.fixed(p.resources, [&](auto& resource) { a.optional(resource, [&](auto& r) { fields(a, r); }); });
}

template <class A, Is<FieldTable> S>
void fields(A& a, S& t, int schema_slot) {
  a.schema(schema_slot, t.schema);
  a.sequence(t.values, [&](auto& v) { a.integer(v); });
}

template <class A, Is<SystemMemory> S>
void fields(A& a, S& m) {
  a.integer(m.physical_total_bytes);
  a.integer(m.physical_available_bytes);
  a.integer(m.swap_total_bytes);
  a.integer(m.swap_free_bytes);
  a.optional(m.commit_charge_bytes, [&](auto& v) { a.integer(v); });
  a.optional(m.commit_limit_bytes, [&](auto& v) { a.integer(v); });
  a.optional(m.commit_backed_bytes, [&](auto& v) { a.integer(v); });
}

template <class A, Is<OvercommitPolicy> S>
void fields(A& a, S& p) {
  a.enumeration(p.mode, OvercommitMode::kNever);
  a.optional(p.ratio_percent, [&](auto& v) { a.real(v); });
  a.optional(p.kbytes, [&](auto& v) { a.integer(v); });
}

template <class A, Is<ProcessMemory> S>
void fields(A& a, S& p) {
  a.integer(p.pid);
  a.text(p.name);
  a.integer(p.resident_bytes);
  a.integer(p.swap_bytes);
  a.integer(p.virtual_bytes);
  a.optional(p.map_areas, [&](auto& v) { a.integer(v); });
  a.optional(p.committed_private_bytes, [&](auto& v) { a.integer(v); });
  a.optional(p.unbacked_promise_bytes, [&](auto& v) { a.integer(v); });
  if (a.version() >= 2) {
    a.optional(p.peak_resident_bytes, [&](auto& v) { a.integer(v); });
    a.optional(p.page_faults_total, [&](auto& v) { a.integer(v); });
  }
}

template <class A, Is<WindowsMemorySection> S>
void fields(A& a, S& w) {
  a.integer(w.commit_peak_bytes);
  a.integer(w.system_cache_bytes);
  a.integer(w.kernel_paged_pool_bytes);
  a.integer(w.kernel_nonpaged_pool_bytes);
  a.optional(w.memory_load_percent, [&](auto& v) { a.integer(v); });
  a.integer(w.processes);
  a.integer(w.threads);
  a.integer(w.handles);
  a.optional(w.low_memory, [&](auto& v) { a.boolean(v); });
  a.integer(w.low_memory_signals_total);
}

template <class A, Is<WindowsPagingSection> S>
void fields(A& a, S& p) {
  auto optional_integer = [&](auto& o) { a.optional(o, [&](auto& v) { a.integer(v); }); };
  optional_integer(p.page_faults_total);
  optional_integer(p.hard_faults_total);
  optional_integer(p.pages_input_total);
  optional_integer(p.pages_output_total);
}

template <class A, Is<ProcessMemorySection> S>
void fields(A& a, S& s) {
  a.sequence(s.processes, [&](auto& p) { fields(a, p); });
  a.integer(s.total_processes);
}

template <class A, Is<VmSysctlSection> S>
void fields(A& a, S& s) {
  a.sequence(s.values, [&](auto& v) {
    a.interned(v.name);
    a.real(v.value);
  });
}

template <class A, Is<WorkloadIdentity> S>
void fields(A& a, S& w) {
  a.text(w.pod_uid);
  a.text(w.qos_class);
  a.text(w.container_id);
  a.text(w.unit);
}

template <class A, Is<CgroupNotifications> S>
void fields(A& a, S& n) {
  a.boolean(n.has_pressure_levels);
  a.fixed(n.pressure, [&](auto& v) { a.integer(v); });
  a.integer(n.oom);
}

template <class A, Is<CgroupSample> S>
void fields(A& a, S& c) {
  auto optional_integer = [&](auto& o) { a.optional(o, [&](auto& v) { a.integer(v); }); };
  a.text(c.path);
  fields(a, c.identity);
  a.boolean(c.leaf);
  optional_integer(c.usage_bytes);
  optional_integer(c.limit_bytes);
  a.boolean(c.limited);
  optional_integer(c.high_bytes);
  optional_integer(c.low_bytes);
  optional_integer(c.swap_usage_bytes);
  optional_integer(c.memsw_usage_bytes);
  optional_integer(c.memsw_limit_bytes);
  optional_integer(c.failcnt);
  a.optional(c.under_oom, [&](auto& v) { a.boolean(v); });
  a.fixed(c.events, optional_integer);
  a.sequence(c.stat, [&](auto& v) {
    a.interned(v.key);
    a.integer(v.value);
    a.boolean(v.counter);
  });
  a.optional(c.pressure, [&](auto& r) { fields(a, r); });
  a.optional(c.notifications, [&](auto& n) { fields(a, n); });
  if (a.version() >= 4) {
    optional_integer(c.oomd_user_kills);
    optional_integer(c.oomd_trusted_kills);
  }
}

template <class A, Is<CgroupSection> S>
void fields(A& a, S& s) {
  a.interned(s.mode);
  a.integer(s.page_bytes);
  a.sequence(s.cgroups, [&](auto& c) { fields(a, c); });
  a.integer(s.discovered);
  a.integer(s.dropped);
  a.integer(s.leaf_limits_sum_bytes);
  a.integer(s.limited_leaves);
  a.integer(s.unlimited_leaves);
  a.integer(s.watched);
  a.optional(s.oom_notifications, [&](auto& v) { a.integer(v); });
  a.integer(s.tree_walks);
  a.integer(s.open_files);
  a.integer(s.malformed_files);
  a.text(s.first_malformed);
  if (a.version() >= 3) {
    a.optional(s.effective_limits_sum_bytes, [&](auto& v) { a.integer(v); });
    a.sequence(s.limits, [&](auto& l) {
      a.text(l.path);
      a.integer(l.limit_bytes);
      a.integer(l.usage_bytes);
      a.integer(l.effective_limit_bytes);
      a.integer(l.headroom_bytes);
    });
    a.integer(s.limits_dropped);
  }
  if (a.version() >= 6) {
    a.optional(s.userspace_oom_kills, [&](auto& kills) {
      a.sequence(kills, [&](auto& k) {
        a.integer(k.sequence);
        a.text(k.cgroup);
        a.integer(k.count);
        a.boolean(k.trusted);
      });
    });
  }
}

template <class A, Is<Log2Distribution> S>
void fields(A& a, S& d) {
  a.fixed(d.slots, [&](auto& v) { a.integer(v); });
  a.integer(d.count);
  a.integer(d.sum_ns);
}

template <class A, Is<ReclaimStallSection> S>
void fields(A& a, S& s) {
  a.interned(s.attach_mode);
  a.fixed(s.kind_modes, [&](auto& v) { a.interned(v); });
  a.interned(s.oom_victims_mode);
  a.fixed(s.node, [&](auto& d) { fields(a, d); });
  a.integer(s.node_oom_victims);
  a.sequence(s.cgroups, [&](auto& c) {
    a.text(c.cgroup);
    a.enumeration(c.kind, static_cast<StallKind>(kStallKindCount - 1));
    fields(a, c.stall);
  });
  a.sequence(s.oom_victims, [&](auto& v) {
    a.text(v.cgroup);
    a.integer(v.count);
  });
  a.integer(s.dropped_cgroups);
  a.integer(s.dropped_events);
  a.integer(s.unresolved_ids);
  if (a.version() >= 4) {
    a.sequence(s.recent_oom_victims, [&](auto& v) {
      a.integer(v.sequence);
      a.integer(v.pid);
      a.text(v.comm);
      a.text(v.cgroup);
    });
  }
}

template <class A, Is<SelectedProcess> S>
void fields(A& a, S& p) {
  a.integer(p.pid);
  a.text(p.comm);
  a.text(p.cgroup);
  a.integer(p.map_count);
  a.real(p.map_areas_ratio);
  a.integer(p.rss_anon_bytes);
  a.integer(p.rss_file_bytes);
  a.integer(p.rss_shmem_bytes);
  a.integer(p.swap_bytes);
  a.integer(p.virtual_bytes);
  a.integer(p.committed_private_bytes);
  a.integer(p.unbacked_promise_bytes);
  a.integer(p.selected_for);
  if (a.version() >= 3) a.boolean(p.uncharged_reservation);
  if (a.version() >= 5) {
    a.integer(p.thread_stack_bytes);
    a.integer(p.private_file_bytes);
  }
}

template <class A, Is<CgroupProcessTotals> S>
void fields(A& a, S& t) {
  a.text(t.cgroup);
  a.integer(t.processes);
  a.integer(t.map_count);
  a.integer(t.rss_anon_bytes);
  a.integer(t.rss_file_bytes);
  a.integer(t.rss_shmem_bytes);
  a.integer(t.swap_bytes);
  a.integer(t.committed_private_bytes);
  a.integer(t.unbacked_promise_bytes);
}

template <class A, Is<ProcessSection> S>
void fields(A& a, S& s) {
  a.interned(s.mode);
  a.time(s.scanned_at);
  a.real(s.scan_seconds);
  a.real(s.scan_cpu_seconds);
  a.real(s.scan_in_flight_seconds);
  a.integer(s.max_map_count);
  a.real(s.threshold_ratio);
  a.integer(s.processes);
  a.real(s.map_areas_ratio_max);
  a.integer(s.committed_private_bytes);
  a.integer(s.unbacked_promise_bytes);
  a.integer(s.above_threshold);
  a.integer(s.above_threshold_dropped);
  a.fixed(s.ratio_cumulative, [&](auto& v) { a.integer(v); });
  a.sequence(s.selected, [&](auto& p) { fields(a, p); });
  a.sequence(s.cgroups, [&](auto& t) { fields(a, t); });
  a.integer(s.dropped_cgroups);
  a.integer(s.unknown_cgroup_processes);
  a.integer(s.vanished_total);
  a.integer(s.unreadable);
  a.integer(s.malformed);
  if (a.version() >= 3) {
    a.integer(s.rss_anon_bytes);
    a.optional(s.anon_pages_bytes, [&](auto& v) { a.integer(v); });
    a.integer(s.uncharged_reservation_processes);
    a.integer(s.uncharged_reservation_bytes);
  }
  if (a.version() >= 5) {
    a.integer(s.not_due_processes);
    a.integer(s.not_due_thread_stack_bytes);
    a.integer(s.not_due_private_file_bytes);
  }
}

template <class A, Is<CanaryReading> S>
void fields(A& a, S& r) {
  fields(a, r.page_fault);
  fields(a, r.cycle);
  a.integer(r.cycles);
  a.integer(r.failures);
  a.integer(r.skipped);
  a.boolean(r.backing_off);
  a.real(r.last_psi_full_avg10);
}

template <class A, Is<CanaryAllocatorStats> S>
void fields(A& a, S& s) {
  a.integer(s.live_bytes);
  a.integer(s.held_bytes);
  a.integer(s.reserved_bytes);
  a.integer(s.released_bytes_total);
  a.integer(s.mappings);
  a.integer(s.ceiling_hits_total);
  a.integer(s.failed_allocations_total);
  if (a.version() >= 4) a.integer(s.ceiling_bytes);
}

template <class A, Is<CanarySection> S>
void fields(A& a, S& s) {
  fields(a, s.node);
  a.text(s.node_cgroup);
  a.boolean(s.node_running);
  fields(a, s.allocator);
  a.sequence(s.cgroups, [&](auto& c) {
    a.text(c.cgroup);
    a.boolean(c.running);
    a.text(c.error);
    fields(a, c.reading);
  });
}

template <class A, Is<SourceStatus> S>
void fields(A& a, S& s) {
  a.text(s.name);
  a.boolean(s.up);
  a.real(s.duration_seconds);
  a.text(s.error);
}

// Everything a source filled; not `derived`, which the replay computes again.
template <class A, Is<Snapshot> S>
void fields(A& a, S& s) {
  a.integer(s.sequence);
  a.time(s.taken_at);
  a.optional(s.system_memory, [&](auto& m) { fields(a, m); });
  a.optional(s.overcommit_policy, [&](auto& p) { fields(a, p); });
  a.optional(s.process_memory, [&](auto& p) { fields(a, p); });
  a.optional(s.meminfo, [&](auto& t) { fields(a, t, 0); });
  a.optional(s.vmstat, [&](auto& t) { fields(a, t, 1); });
  a.optional(s.pressure, [&](auto& p) { fields(a, p); });
  a.optional(s.vm_sysctl, [&](auto& v) { fields(a, v); });
  a.optional(s.cgroups, [&](auto& c) { fields(a, c); });
  a.optional(s.reclaim_stall, [&](auto& r) { fields(a, r); });
  a.optional(s.processes, [&](auto& p) { fields(a, p); });
  a.optional(s.canary, [&](auto& c) { fields(a, c); });
  if (a.version() >= 2) {
    a.optional(s.windows_memory, [&](auto& w) { fields(a, w); });
    a.optional(s.windows_paging, [&](auto& p) { fields(a, p); });
  }
  a.sequence(s.sources, [&](auto& source) { fields(a, source); });
}

// Whether two snapshots hold the same recorded fields (everything but `derived`).
inline bool same_recorded_fields(const Snapshot& a, const Snapshot& b) {
  return a.sequence == b.sequence && a.taken_at == b.taken_at && a.system_memory == b.system_memory &&
         a.overcommit_policy == b.overcommit_policy && a.process_memory == b.process_memory &&
         a.meminfo == b.meminfo && a.vmstat == b.vmstat && a.pressure == b.pressure && a.vm_sysctl == b.vm_sysctl &&
         a.cgroups == b.cgroups && a.reclaim_stall == b.reclaim_stall && a.processes == b.processes &&
         a.canary == b.canary && a.windows_memory == b.windows_memory &&
         a.windows_paging == b.windows_paging && a.sources == b.sources;
}

}  // namespace memdiag::recording
