/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* The kinds of memory stall the eBPF probe times, in one list: the BPF programs (probes/bpf,
 * clang -target bpf), the probe that attaches them, the snapshot section and the exporter's
 * `kind` label are all generated from it, so a kind cannot be added, renamed or reordered in
 * one place and not the others.
 *
 * Plain C with no include, so both the BPF compiler and the portable C++ core can read it.
 *
 * MEMDIAG_STALL_KINDS(BEGIN_END, AFTER_WAIT) calls, in enum order,
 *   BEGIN_END(ID, Id, name, group, begin, end)   a stall timed from tracepoint `begin` to
 *                                               tracepoint `end` in the same task
 *   AFTER_WAIT(ID, Id, name, group, tracepoint)  a tracepoint that fires after the wait and
 *                                               carries its length
 * with ID the C enumerator's suffix (MEMDIAG_STALL_<ID>), Id the C++ one (StallKind::k<Id>),
 * name the `kind` label and the BPF programs' middle name (btf_<name>_begin), group and the
 * tracepoints as the kernel names them (tracefs events/<group>/<tracepoint>, tp_btf/<tracepoint>).
 * All are bare tokens: users stringify what they need. */
#ifndef MEMDIAG_PROBES_CORE_STALL_KINDS_H
#define MEMDIAG_PROBES_CORE_STALL_KINDS_H

#define MEMDIAG_STALL_KINDS(BEGIN_END, AFTER_WAIT)                                                  \
  /* global direct reclaim: the node ran short */                                                 \
  BEGIN_END(DIRECT, Direct, direct, vmscan, mm_vmscan_direct_reclaim_begin,                       \
            mm_vmscan_direct_reclaim_end)                                                         \
  /* reclaim forced by a memory cgroup's limit (or memory.high) */                                 \
  BEGIN_END(MEMCG, Memcg, memcg, vmscan, mm_vmscan_memcg_reclaim_begin, mm_vmscan_memcg_reclaim_end) \
  /* cgroup v1 soft-limit reclaim inside global reclaim */                                        \
  BEGIN_END(SOFTLIMIT, SoftLimit, softlimit, vmscan, mm_vmscan_memcg_softlimit_reclaim_begin,     \
            mm_vmscan_memcg_softlimit_reclaim_end)                                                \
  /* direct compaction (high-order allocations; kernel threads skipped) */                        \
  BEGIN_END(COMPACTION, Compaction, compaction, compaction, mm_compaction_begin, mm_compaction_end) \
  /* waits in reclaim throttling (writeback congestion, isolated pages, no progress; 5.16+) */    \
  AFTER_WAIT(THROTTLED, Throttled, throttled, vmscan, mm_vmscan_throttled)

#define MEMDIAG_STALL_ENUMERATOR_(ID, ...) MEMDIAG_STALL_##ID,

/* What kind of stall a histogram counts: the key's `kind` in the BPF maps. */
enum memdiag_stall_kind {
  MEMDIAG_STALL_KINDS(MEMDIAG_STALL_ENUMERATOR_, MEMDIAG_STALL_ENUMERATOR_)
  MEMDIAG_STALL_KIND_COUNT
};

#undef MEMDIAG_STALL_ENUMERATOR_

#endif
