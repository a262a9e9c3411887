/* Layout shared by reclaim_stall.bpf.c (kernel side) and reclaim_stall_probe.cpp (user space).
 * Plain C so both compilers read the same bytes: BPF gets its types from vmlinux.h, user space
 * from <linux/types.h>. Every struct is padded explicitly so the two sides cannot disagree. */
#ifndef MEMDIAG_PROBES_BPF_RECLAIM_STALL_H
#define MEMDIAG_PROBES_BPF_RECLAIM_STALL_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* What kind of stall a histogram counts. */
enum memdiag_stall_kind {
  MEMDIAG_STALL_DIRECT = 0,     /* global direct reclaim (mm_vmscan_direct_reclaim_*) */
  MEMDIAG_STALL_MEMCG = 1,      /* memcg limit/high reclaim (mm_vmscan_memcg_reclaim_*) */
  MEMDIAG_STALL_SOFTLIMIT = 2,  /* v1 soft-limit reclaim (mm_vmscan_memcg_softlimit_reclaim_*) */
  MEMDIAG_STALL_COMPACTION = 3, /* direct compaction (mm_compaction_*, kernel threads skipped) */
  MEMDIAG_STALL_THROTTLED = 4,  /* reclaim throttling waits (mm_vmscan_throttled usec_delayed) */
  MEMDIAG_STALL_KIND_COUNT = 5,
};

/* Why an event was not counted. */
enum memdiag_drop_reason {
  MEMDIAG_DROP_HIST_FULL = 0,   /* a new {kind, memcg} key did not fit (map full, or no memory) */
  MEMDIAG_DROP_START_FULL = 1,  /* too many threads inside a stall at once */
  MEMDIAG_DROP_VICTIM_FULL = 2, /* OOM victim map full */
  MEMDIAG_DROP_NO_TASK = 3,     /* OOM victim pid not found (classic tracepoint mode) */
  MEMDIAG_DROP_REASON_COUNT = 4,
};

/* Slot i counts durations d (ns) with floor(log2(d)) == i, i.e. 2^i <= d < 2^(i+1); slot 0
 * also takes d == 0 and the last slot takes everything from 2^39 ns (~550 s) up. 40 slots
 * cover 1 ns to minutes, which is the whole range of a reclaim stall. */
#define MEMDIAG_STALL_SLOTS 40

/* Map capacities. Histogram keys: one per {kind, memcg} that ever stalled; a node with a few
 * thousand cgroups fits (entries allocated on first use). Starts: threads inside a stall at
 * the same moment, and victims: memcgs that had an OOM kill; both preallocated (~80 and ~90
 * bytes an entry) because they are inserted while memory is short. */
#define MEMDIAG_MAX_HIST_KEYS 10240
#define MEMDIAG_MAX_STARTS 8192
#define MEMDIAG_MAX_VICTIM_KEYS 4096

struct memdiag_hist_key {
  __u32 kind; /* enum memdiag_stall_kind */
  __u32 pad;  /* always 0: hash keys are compared bytewise */
  __u64 memcg_id;
};

struct memdiag_hist_value {
  __u64 slots[MEMDIAG_STALL_SLOTS];
  __u64 count;
  __u64 sum_ns;
};

struct memdiag_start_key {
  __u32 tid;
  __u32 kind; /* kinds nest (soft-limit reclaim runs inside direct reclaim): one start each */
};

/* floor(log2(ns)) clamped to the last slot, by binary search on the bit position: no loop,
 * so the verifier accepts it at once, and user space tests the very same code. */
static inline __u32 memdiag_stall_slot(__u64 ns) {
  __u32 r = 0;
  if (ns >> 32) { ns >>= 32; r += 32; }
  if (ns >> 16) { ns >>= 16; r += 16; }
  if (ns >> 8) { ns >>= 8; r += 8; }
  if (ns >> 4) { ns >>= 4; r += 4; }
  if (ns >> 2) { ns >>= 2; r += 2; }
  if (ns >> 1) { r += 1; }
  return r < MEMDIAG_STALL_SLOTS ? r : MEMDIAG_STALL_SLOTS - 1;
}

#endif
