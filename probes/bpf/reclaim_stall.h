/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* Layout shared by reclaim_stall.bpf.c (kernel side) and reclaim_stall_probe.cpp (user space).
 * Plain C so both compilers read the same bytes: BPF gets its types from vmlinux.h, user space
 * from <linux/types.h>. Every struct is padded explicitly so the two sides cannot disagree. */
#ifndef MEMDIAG_PROBES_BPF_RECLAIM_STALL_H
#define MEMDIAG_PROBES_BPF_RECLAIM_STALL_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* The kinds (enum memdiag_stall_kind, from one list) and the histogram layout (slots and the
 * slot function) are shared with the portable core, so they live there. */
#include "probes/core/log2_layout.h"
#include "probes/core/stall_kinds.h"

/* Why an event was not counted. */
enum memdiag_drop_reason {
  MEMDIAG_DROP_HIST_FULL = 0,   /* a new {kind, memcg} key did not fit (map full, or no memory) */
  MEMDIAG_DROP_START_FULL = 1,  /* too many threads inside a stall at once */
  MEMDIAG_DROP_VICTIM_FULL = 2, /* OOM victim map full */
  MEMDIAG_DROP_NO_TASK = 3,     /* OOM victim pid not found (classic tracepoint mode) */
  MEMDIAG_DROP_REASON_COUNT = 4,
};

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
  __u64 slots[MEMDIAG_LOG2_SLOTS];
  __u64 count;
  __u64 sum_ns;
};

/* The last OOM victims, in a ring in the object's global data (read by user space through its
 * mmap of .bss, like the generations): who was killed, not only where. `seq` is the victim's
 * number since load, from 1, written after the rest; slot = (seq - 1) % MEMDIAG_RECENT_VICTIMS.
 * An entry being rewritten while user space copies it can be read torn (a rare wrong comm). */
#define MEMDIAG_RECENT_VICTIMS 16
#define MEMDIAG_COMM_LEN 16

struct memdiag_recent_victim {
  __u64 seq;
  __u64 memcg_id;
  __u32 pid; /* the thread group (process) id */
  __u32 pad;
  char comm[MEMDIAG_COMM_LEN];
};

struct memdiag_start_key {
  __u32 tid;
  __u32 kind; /* kinds nest (soft-limit reclaim runs inside direct reclaim): one start each */
};

#endif
