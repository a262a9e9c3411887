// SPDX-License-Identifier: GPL-2.0
/* Reclaim-stall tracing: how long tasks wait in direct reclaim, memcg reclaim,
 * soft-limit reclaim, direct compaction and reclaim throttling, as log2 histograms per
 * {kind, memory cgroup}, plus OOM victims per memory cgroup. Everything is aggregated in the
 * kernel; user space only reads the maps, so the cost does not grow with the event rate.
 *
 * Every event has two programs: a tp_btf one (typed arguments, needs no tracefs) and a classic
 * tracepoint one (needs tracefs, used when tp_btf cannot attach). User space chooses per kind
 * (probes/core/stall_kinds.h) and loads one of the two for each, so a kernel without one
 * kind's tracepoints still traces the others. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "reclaim_stall.h"

/* vmlinux.h carries no macros. */
#define PF_KTHREAD 0x00200000
#define EEXIST 17

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MEMDIAG_MAX_HIST_KEYS);
  /* Not preallocated: a 336-byte value times 10240 keys would pin 3.4 MB for keys most nodes
   * never use; entries are created once per {kind, memcg} and then only updated in place. The
   * memory is charged to the loader's cgroup, not to the stalled one. */
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct memdiag_hist_key);
  __type(value, struct memdiag_hist_value);
} stall_hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MEMDIAG_MAX_STARTS);
  __type(key, struct memdiag_start_key);
  __type(value, __u64);
} stall_start SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MEMDIAG_MAX_VICTIM_KEYS);
  __type(key, __u64); /* memcg id */
  __type(value, __u64);
} oom_victims SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MEMDIAG_DROP_REASON_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

/* Bumped after every change to the histograms (or a histogram drop), and to the OOM victims
 * (or a victim drop). User space reads them through the skeleton's mmap of .bss, without a
 * syscall, and walks a map only when its generation moved: on a node without memory pressure a
 * read costs nothing, where walking the sparse hash maps costs ~25 us each (every bucket is
 * visited). A relaxed increment (arm64) may become visible before the update it follows; the
 * update is then picked up at the next event's bump. */
__u64 hist_generation = 0;
__u64 victim_generation = 0;
/* The last victims (reclaim_stall.h): a ring, and how many were ever written to it. */
struct memdiag_recent_victim recent_victims[MEMDIAG_RECENT_VICTIMS] = {};
__u64 recent_victims_written = 0;

static __always_inline void count_drop(__u32 reason) {
  __u64 *n = bpf_map_lookup_elem(&drops, &reason);
  if (n)
    *n += 1; /* per-CPU slot: no atomic needed */
  if (reason == MEMDIAG_DROP_VICTIM_FULL || reason == MEMDIAG_DROP_NO_TASK)
    __sync_fetch_and_add(&victim_generation, 1);
  else
    __sync_fetch_and_add(&hist_generation, 1);
}

/* The id of the task's memory cgroup: the kernfs id of the cgroup in the hierarchy the memory
 * controller is on. On cgroup v1 that is the inode number of the v1 memory cgroup directory,
 * on v2 the cgroup id (bpf_get_current_cgroup_id() would give the v2 id even on a hybrid
 * layout whose memory controller is on v1, which names the wrong cgroup). */
static __always_inline __u64 memcg_id_of(struct task_struct *task) {
  if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
    return 0; /* kernel without the memory controller */
  int ss = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
  return BPF_CORE_READ(task, cgroups, subsys[ss], cgroup, kn, id);
}

/* Kernel threads (kswapd, kcompactd, kworkers) reclaim and compact in the background; that is
 * not a task waiting for memory, and they would all be charged to the root cgroup anyway. */
static __always_inline bool current_is_kthread(void) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  return BPF_CORE_READ(task, flags) & PF_KTHREAD;
}

static __always_inline void record(__u32 kind, __u64 memcg_id, __u64 ns) {
  struct memdiag_hist_key key = {.kind = kind, .pad = 0, .memcg_id = memcg_id};
  struct memdiag_hist_value *v = bpf_map_lookup_elem(&stall_hist, &key);
  if (!v) {
    /* Another CPU may insert the same key in between: NOEXIST + EEXIST keeps its counts. */
    struct memdiag_hist_value zero = {};
    long err = bpf_map_update_elem(&stall_hist, &key, &zero, BPF_NOEXIST);
    if (err && err != -EEXIST) {
      count_drop(MEMDIAG_DROP_HIST_FULL);
      return;
    }
    v = bpf_map_lookup_elem(&stall_hist, &key);
    if (!v) {
      count_drop(MEMDIAG_DROP_HIST_FULL);
      return;
    }
  }
  /* Bucket first, count last: a reader racing an update sees sum(slots) >= count, never a
   * count no bucket accounts for. */
  __sync_fetch_and_add(&v->slots[memdiag_log2_slot(ns)], 1);
  __sync_fetch_and_add(&v->sum_ns, ns);
  __sync_fetch_and_add(&v->count, 1);
  __sync_fetch_and_add(&hist_generation, 1);
}

static __always_inline void stall_begin(__u32 kind) {
  if (current_is_kthread())
    return;
  struct memdiag_start_key key = {.tid = (__u32)bpf_get_current_pid_tgid(), .kind = kind};
  __u64 now = bpf_ktime_get_ns();
  /* A nested begin of the same kind (not expected) restarts the clock: the simple choice. */
  if (bpf_map_update_elem(&stall_start, &key, &now, BPF_ANY))
    count_drop(MEMDIAG_DROP_START_FULL);
}

static __always_inline void stall_end(__u32 kind) {
  struct memdiag_start_key key = {.tid = (__u32)bpf_get_current_pid_tgid(), .kind = kind};
  __u64 *start = bpf_map_lookup_elem(&stall_start, &key);
  if (!start)
    return; /* began before we attached, or a kernel thread */
  __u64 begin = *start;
  bpf_map_delete_elem(&stall_start, &key);
  __u64 now = bpf_ktime_get_ns();
  if (now < begin)
    return;
  record(kind, memcg_id_of((struct task_struct *)bpf_get_current_task()), now - begin);
}

/* mm_vmscan_throttled fires after the wait with the time actually slept (usec_delayed, in
 * microseconds; usec_timeout is only the requested maximum), so no begin/end pair. */
static __always_inline void throttled(int usec_delayed) {
  if (current_is_kthread())
    return;
  __u64 ns = usec_delayed > 0 ? (__u64)usec_delayed * 1000 : 0;
  record(MEMDIAG_STALL_THROTTLED, memcg_id_of((struct task_struct *)bpf_get_current_task()), ns);
}

static __always_inline void oom_victim_in(__u64 memcg_id) {
  __u64 one = 1;
  __u64 *n = bpf_map_lookup_elem(&oom_victims, &memcg_id);
  if (!n) {
    long err = bpf_map_update_elem(&oom_victims, &memcg_id, &one, BPF_NOEXIST);
    if (!err) {
      __sync_fetch_and_add(&victim_generation, 1);
      return;
    }
    if (err != -EEXIST) {
      count_drop(MEMDIAG_DROP_VICTIM_FULL);
      return;
    }
    n = bpf_map_lookup_elem(&oom_victims, &memcg_id); /* inserted by another CPU meanwhile */
    if (!n)
      return;
  }
  __sync_fetch_and_add(n, 1);
  __sync_fetch_and_add(&victim_generation, 1);
}

/* The kernel marks victims under oom_lock (global and memcg OOMs alike), one at a time: plain
 * increments suffice, and BPF before v3 has no fetching atomics anyway. */
static __always_inline void remember_victim(struct task_struct *task, __u64 memcg_id) {
  __u64 seq = recent_victims_written + 1;
  recent_victims_written = seq;
  struct memdiag_recent_victim *v = &recent_victims[(seq - 1) & (MEMDIAG_RECENT_VICTIMS - 1)];
  v->seq = 0; /* being written */
  v->memcg_id = memcg_id;
  v->pid = BPF_CORE_READ(task, tgid);
  BPF_CORE_READ_STR_INTO(&v->comm, task, comm);
  asm volatile("" ::: "memory"); /* the entry before its number */
  v->seq = seq;
}

/* ---- The begin/end kinds of stall_kinds.h, four programs each: tp_btf (typed raw
 * tracepoint arguments, attached through BTF, no tracefs) and classic tracepoint (through
 * tracefs' perf events), for begin and end. Named btf_<kind>_begin, tp_<kind>_end and so on;
 * user space finds a program's kind by the tracepoint in its section name. ---- */

#define BEGIN_END_PROGRAMS(ID, Id, name, group, begin, end)                                 \
  SEC("tp_btf/" #begin)                                                                    \
  int BPF_PROG(btf_##name##_begin) { stall_begin(MEMDIAG_STALL_##ID); return 0; }            \
  SEC("tp_btf/" #end)                                                                      \
  int BPF_PROG(btf_##name##_end) { stall_end(MEMDIAG_STALL_##ID); return 0; }                \
  SEC("tracepoint/" #group "/" #begin)                                                     \
  int tp_##name##_begin(void *ctx) { stall_begin(MEMDIAG_STALL_##ID); return 0; }            \
  SEC("tracepoint/" #group "/" #end)                                                       \
  int tp_##name##_end(void *ctx) { stall_end(MEMDIAG_STALL_##ID); return 0; }
/* A kind timed after the wait reads the wait's length from its tracepoint's own arguments,
 * which no macro can know: written out below. */
#define AFTER_WAIT_PROGRAMS(...)

MEMDIAG_STALL_KINDS(BEGIN_END_PROGRAMS, AFTER_WAIT_PROGRAMS)

/* ---- Throttled (AFTER_WAIT): mm_vmscan_throttled, kernel 5.16 and later. ---- */

/* TP_PROTO(int nid, int usec_timeout, int usec_delayed, int reason) */
SEC("tp_btf/mm_vmscan_throttled")
int BPF_PROG(btf_throttled, int nid, int usec_timeout, int usec_delayed) {
  throttled(usec_delayed);
  return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_throttled")
int tp_throttled(struct trace_event_raw_mm_vmscan_throttled *ctx) {
  throttled(ctx->usec_delayed);
  return 0;
}

/* ---- OOM victims (oom:mark_victim), per memory cgroup. ---- */

/* Before 6.8 mark_victim passed only the victim's pid (TP_PROTO(int pid)); since, the task and
 * its uid. The victim's task cannot be found from its pid without the bpf_task_from_pid kfunc
 * (6.2), which Debian 12's libbpf (1.1) cannot leave unresolved where the kernel lacks it: the
 * whole object would fail to load. So a pid-only record names the pid, and the memory cgroup of
 * the task running the OOM killer: for a memcg OOM that task charges inside the OOMing subtree,
 * so the innermost limited ancestor user space attributes the kill to is the victim's too. The
 * comm is the running task's when it is the victim itself (a process killed for its own
 * allocation: the common case of a one-process job), else left empty (by the time user space
 * could read /proc, the victim is gone). */
static __always_inline void pid_only_victim(__u32 pid) {
  struct task_struct *running = (struct task_struct *)bpf_get_current_task();
  __u64 id = memcg_id_of(running);
  __u64 seq = recent_victims_written + 1;
  recent_victims_written = seq;
  struct memdiag_recent_victim *v = &recent_victims[(seq - 1) & (MEMDIAG_RECENT_VICTIMS - 1)];
  v->seq = 0;
  v->memcg_id = id;
  v->pid = pid;
  /* Compared as read back from the record: under tp_btf before 6.8 `pid` is the verifier's
   * "task pointer" argument, on which it allows no arithmetic; the stored copy is a number. */
  if (*(volatile __u32 *)&v->pid == (__u32)(bpf_get_current_pid_tgid() >> 32)) {
    BPF_CORE_READ_STR_INTO(&v->comm, running, comm);
  } else {
    v->comm[0] = 0;
  }
  asm volatile("" ::: "memory");
  v->seq = seq;
  oom_victim_in(id);
}

/* Kernel pointers live in the top half of the address space; pids are below 2^22. */
#define MEMDIAG_MAX_PID 0x400000

SEC("tp_btf/mark_victim")
int BPF_PROG(btf_oom_victim, struct task_struct *task) {
  if ((__u64)task < MEMDIAG_MAX_PID) { /* a kernel before 6.8: the argument is the pid */
    pid_only_victim((__u32)(__u64)task);
    return 0;
  }
  __u64 id = memcg_id_of(task);
  remember_victim(task, id);
  oom_victim_in(id);
  return 0;
}

SEC("tracepoint/oom/mark_victim")
int tp_oom_victim(struct trace_event_raw_mark_victim *ctx) {
  pid_only_victim((__u32)ctx->pid);
  return 0;
}
