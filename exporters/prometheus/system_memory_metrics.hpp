// SPDX-License-Identifier: Apache-2.0
// The OS-neutral series: the same names on Linux and Windows, so one dashboard and
// one set of alerts cover a mixed fleet.
// - From SystemMemory, on every platform: memdiag_memory_{total,available}_bytes,
//   memdiag_swap_{total,free}_bytes (Windows: the page files), memdiag_commit_charge_bytes and
//   memdiag_commit_limit_bytes (Linux: Committed_AS and CommitLimit, the same figures as the
//   memdiag_meminfo_* series; Windows: the commit charge and limit).
// - From ProcessMemorySection, where no Linux process scan says more (Windows):
//   memdiag_process_working_set_bytes, _working_set_peak_bytes, memdiag_process_committed_private_bytes
//   (Windows: private bytes, its commit charge), memdiag_process_unbacked_promise_bytes,
//   memdiag_process_page_faults_total, all {pid, comm}, and memdiag_processes. On Linux the
//   process source renders its own richer series under the shared names (process_metrics.hpp).
// - From WindowsMemorySection: memdiag_commit_peak_bytes, memdiag_system_cache_bytes,
//   memdiag_kernel_pool_bytes{pool}, memdiag_memory_load_ratio, memdiag_system_{processes,
//   threads,handles}, memdiag_low_memory and memdiag_low_memory_signals_total.
// - From WindowsPagingSection: memdiag_paging_{page_faults,hard_faults,pages_input,
//   pages_output}_total, each where PDH has its counter.
#pragma once

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/process_memory_section.hpp"
#include "probes/core/system_memory_section.hpp"
#include "probes/core/windows_memory_section.hpp"

namespace memdiag::prom {

void render_system_memory(const SystemMemory& memory, MetricSink& sink);
void render_process_memory(const ProcessMemorySection& processes, MetricSink& sink);
void render_windows_memory(const WindowsMemorySection& windows, MetricSink& sink);
void render_windows_paging(const WindowsPagingSection& paging, MetricSink& sink);

}  // namespace memdiag::prom
