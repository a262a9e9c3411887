/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* Layout shared by task_maps.bpf.c (kernel side) and task_maps_iterator.cpp (user space): one
 * fixed-size binary record per process, written with bpf_seq_write by the iter/task program.
 * Plain C so both compilers read the same bytes: BPF gets its types from vmlinux.h, user space
 * from <linux/types.h>. Padded explicitly so the two sides cannot disagree. */
#ifndef MEMDIAG_PROBES_BPF_TASK_MAPS_H
#define MEMDIAG_PROBES_BPF_TASK_MAPS_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define MEMDIAG_TASK_COMM_LEN 16

struct memdiag_task_maps {
  __u32 tgid;             /* process id, as the initial pid namespace numbers it */
  __u32 map_count;        /* mm->map_count: VMAs, the figure vm.max_map_count limits */
  /* mm->rss_stat counters in pages. On kernels >= 6.2 these are percpu_counter.count, the
   * approximate global value (per-CPU deltas not folded in), which can be slightly off and even
   * briefly negative; hence signed. */
  __s64 rss_file_pages;   /* MM_FILEPAGES */
  __s64 rss_anon_pages;   /* MM_ANONPAGES */
  __s64 rss_shmem_pages;  /* MM_SHMEMPAGES */
  __s64 swap_entries;     /* MM_SWAPENTS: pages swapped out (swap entries in the page tables) */
  __u64 total_vm_pages;   /* mm->total_vm: mapped virtual size in pages */
  __u64 data_vm_pages;    /* mm->data_vm: private writable non-stack mappings (VmData) */
  __u64 stack_vm_pages;   /* mm->stack_vm: stack mappings (VmStk) */
  __u64 memcg_id;         /* kernfs id of the task's memory cgroup (v1 memory dir inode, or v2 id) */
  char comm[MEMDIAG_TASK_COMM_LEN]; /* thread-group leader's comm, NUL-padded */
};

#endif /* MEMDIAG_PROBES_BPF_TASK_MAPS_H */
