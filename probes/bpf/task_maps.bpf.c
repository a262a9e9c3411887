// SPDX-License-Identifier: GPL-2.0
/* Per-process map counts and RSS split: an iter/task program that writes one
 * struct memdiag_task_maps per process (thread-group leader with an mm) into the iterator's
 * seq_file. User space reads the records with read() on an iterator fd: no maps, no per-pid
 * /proc walks, one pass over the task list per scan. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "task_maps.h"

/* vmlinux.h carries no macros, and the mm counter enum is anonymous (no CO-RE by name); its
 * order has been stable since MM_SHMEMPAGES was added in 4.5. */
#define PF_KTHREAD 0x00200000
#define MEMDIAG_MM_FILEPAGES 0
#define MEMDIAG_MM_ANONPAGES 1
#define MEMDIAG_MM_SWAPENTS 2
#define MEMDIAG_MM_SHMEMPAGES 3

char LICENSE[] SEC("license") = "GPL";

/* Kernels before 6.2 kept the counters as atomic_long_t in struct mm_rss_stat; from 6.2 on
 * mm->rss_stat is an array of struct percpu_counter (the layout vmlinux.h has here). */
struct mm_rss_stat___old {
  atomic_long_t count[4];
} __attribute__((preserve_access_index));
struct mm_struct___old {
  struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

/* Which layout is decided in user space (task_maps_iterator.cpp), which loads only the program
 * for it: a CO-RE relocation against a type this kernel's BTF lacks makes libbpf 1.1 look through
 * the kernel modules' BTF, which needs CAP_SYS_ADMIN (BPF_BTF_GET_NEXT_ID) even for relocations
 * behind a bpf_core_type_exists() test. `old_layout` is a constant at each call: the other
 * layout's loads, and their relocations, are compiled out of each program. */
static __always_inline __s64 rss_counter(struct mm_struct *mm, int member, bool old_layout) {
  if (old_layout) {
    struct mm_struct___old *old = (void *)mm;
    return BPF_CORE_READ(old, rss_stat.count[member].counter);
  }
  return mm->rss_stat[member].count;
}

/* Same as reclaim_stall.bpf.c: the kernfs id of the cgroup in the memory controller's
 * hierarchy, i.e. stat().st_ino of the v1 memory cgroup directory (or the v2 cgroup id). */
static __always_inline __u64 memcg_id_of(struct task_struct *task) {
  if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
    return 0;
  int ss = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
  /* Direct loads through the trusted task pointer; a NULL on the way reads as 0. */
  return task->cgroups->subsys[ss]->cgroup->kn->id;
}

static __always_inline int dump_one(struct bpf_iter__task *ctx, bool old_layout) {
  struct seq_file *seq = ctx->meta->seq;
  struct task_struct *task = ctx->task;
  if (!task)
    return 0; /* the final call after the last task */

  /* The iterator visits every thread; one record per process. ctx->task is a trusted BTF
   * pointer: plain loads (CO-RE relocated through vmlinux.h's preserve_access_index) compile to
   * direct kernel loads, much cheaper than a bpf_probe_read_kernel call per field. */
  if (task->pid != task->tgid)
    return 0;
  /* Kernel threads have no mm, except while borrowing one (kthread_use_mm): skip both. */
  if (task->flags & PF_KTHREAD)
    return 0;
  struct mm_struct *mm = task->mm;
  if (!mm)
    return 0; /* a zombie leader whose mm is gone */

  struct memdiag_task_maps rec = {};
  rec.tgid = task->tgid;
  rec.map_count = mm->map_count;
  rec.rss_file_pages = rss_counter(mm, MEMDIAG_MM_FILEPAGES, old_layout);
  rec.rss_anon_pages = rss_counter(mm, MEMDIAG_MM_ANONPAGES, old_layout);
  rec.rss_shmem_pages = rss_counter(mm, MEMDIAG_MM_SHMEMPAGES, old_layout);
  rec.swap_entries = rss_counter(mm, MEMDIAG_MM_SWAPENTS, old_layout);
  rec.total_vm_pages = mm->total_vm;
  /* What the process was promised privately: the fields VmData and VmStk show. */
  rec.data_vm_pages = mm->data_vm;
  rec.stack_vm_pages = mm->stack_vm;
  rec.memcg_id = memcg_id_of(task);
  __builtin_memcpy(rec.comm, task->comm, sizeof(rec.comm));

  bpf_seq_write(seq, &rec, sizeof(rec));
  return 0;
}

/* Kernels from 6.2 on: mm->rss_stat is an array of struct percpu_counter. */
SEC("iter/task")
int dump_task_maps(struct bpf_iter__task *ctx) { return dump_one(ctx, false); }

/* Kernels before 6.2: atomic counters in struct mm_rss_stat. */
SEC("iter/task")
int dump_task_maps_atomic_rss(struct bpf_iter__task *ctx) { return dump_one(ctx, true); }
