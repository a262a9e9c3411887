/* SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only */
/* The log2 latency layout: how a duration in nanoseconds picks its histogram slot, and where a
 * slot ends. The one definition behind the in-kernel eBPF histograms (probes/bpf, compiled by
 * clang -target bpf), Log2Distribution (probes/core, C++, also the canary's) and the Prometheus
 * buckets (exporters/prometheus/log2_buckets), so the kernel and user space cannot disagree.
 *
 * Plain C with no include at all: the BPF side has only vmlinux.h, and the portable core may
 * include no OS header. The 64-bit type comes from the compiler (GCC and clang predefine
 * __UINT64_TYPE__ as the type of uint64_t), or from the includer (define MEMDIAG_LOG2_U64). */
#ifndef MEMDIAG_PROBES_CORE_LOG2_LAYOUT_H
#define MEMDIAG_PROBES_CORE_LOG2_LAYOUT_H

#ifndef MEMDIAG_LOG2_U64
#ifdef __UINT64_TYPE__
#define MEMDIAG_LOG2_U64 __UINT64_TYPE__
#else
#define MEMDIAG_LOG2_U64 unsigned long long
#endif
#endif

/* A negative array size if the type is not 64 bits wide: a compile error in C and C++ alike. */
typedef char memdiag_log2_u64_is_64_bits[sizeof(MEMDIAG_LOG2_U64) == 8 ? 1 : -1];

/* In C++ the functions are constexpr, so tables and tests can be computed at compile time; in
 * C (and for BPF) static inline, which clang inlines into the programs. */
#ifdef __cplusplus
#define MEMDIAG_LOG2_FN constexpr
#else
#define MEMDIAG_LOG2_FN static inline
#endif

/* Slot i counts durations d (ns) with floor(log2(d)) == i, i.e. 2^i <= d < 2^(i+1); slot 0
 * also takes d == 0 and the last slot takes everything from 2^39 ns (~550 s) up. 40 slots
 * cover 1 ns to minutes, which is the whole range of a reclaim stall or a page fault. */
#define MEMDIAG_LOG2_SLOTS 40

/* floor(log2(ns)) clamped to the last slot, by binary search on the bit position: no loop, so
 * the BPF verifier accepts it at once, and user space runs the very same code. */
MEMDIAG_LOG2_FN unsigned int memdiag_log2_slot(MEMDIAG_LOG2_U64 ns) {
  unsigned int r = 0;
  if (ns >> 32) { ns >>= 32; r += 32; }
  if (ns >> 16) { ns >>= 16; r += 16; }
  if (ns >> 8) { ns >>= 8; r += 8; }
  if (ns >> 4) { ns >>= 4; r += 4; }
  if (ns >> 2) { ns >>= 2; r += 2; }
  if (ns >> 1) { r += 1; }
  return r < MEMDIAG_LOG2_SLOTS ? r : MEMDIAG_LOG2_SLOTS - 1;
}

/* Exclusive upper bound of `slot` in nanoseconds: 2^(slot+1). Every duration counted in the
 * slot is below it, every duration of the next slot at or above it. The last slot (and any
 * past the end) is open-ended: the largest 64-bit value. */
MEMDIAG_LOG2_FN MEMDIAG_LOG2_U64 memdiag_log2_upper_bound_ns(unsigned int slot) {
  if (slot >= MEMDIAG_LOG2_SLOTS - 1) return ~(MEMDIAG_LOG2_U64)0;
  return (MEMDIAG_LOG2_U64)1 << (slot + 1);
}

#endif
