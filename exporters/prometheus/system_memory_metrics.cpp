// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/system_memory_metrics.hpp"

#include "exporters/prometheus/pid_label.hpp"

namespace memdiag::prom {
namespace {

using prometheus::MetricType;

void gauge(MetricSink& sink, std::string_view name, std::string_view help, double value) {
  sink.family(name, help, MetricType::Gauge);
  sink.sample({}, value);
}

// One sample per process that has the figure, labelled pid and comm (the image name on Windows).
template <class Value>
void per_process(const ProcessMemorySection& section, MetricSink& sink, Value value) {
  for (const ProcessMemory& p : section.processes) {
    const auto v = value(p);
    if (!v) continue;
    const PidLabel pid(p.pid);
    sink.sample({{"pid", pid.view}, {"comm", p.name}}, static_cast<double>(*v));
  }
}

}  // namespace

void render_system_memory(const SystemMemory& m, MetricSink& sink) {
  gauge(sink, "memdiag_memory_total_bytes", "Physical memory (Linux MemTotal, Windows PhysicalTotal).",
        static_cast<double>(m.physical_total_bytes));
  gauge(sink, "memdiag_memory_available_bytes",
        "Physical memory that can be handed out without swapping (Linux MemAvailable, Windows PhysicalAvailable).",
        static_cast<double>(m.physical_available_bytes));
  gauge(sink, "memdiag_swap_total_bytes", "Swap (Windows: the page files, the commit limit less physical memory).",
        static_cast<double>(m.swap_total_bytes));
  gauge(sink, "memdiag_swap_free_bytes",
        "Free swap (Windows: at most what can still be committed beyond physical memory; the page files' own use "
        "is not known without PDH).",
        static_cast<double>(m.swap_free_bytes));
  if (m.commit_charge_bytes) {
    gauge(sink, "memdiag_commit_charge_bytes",
          "Memory promised to processes: Linux Committed_AS, Windows the commit charge.",
          static_cast<double>(*m.commit_charge_bytes));
  }
  if (m.commit_limit_bytes) {
    gauge(sink, "memdiag_commit_limit_bytes",
          "The commit limit: Linux CommitLimit (enforced only under vm.overcommit_memory=2), Windows the commit "
          "limit (always enforced: a commit beyond it fails).",
          static_cast<double>(*m.commit_limit_bytes));
  }
}

void render_process_memory(const ProcessMemorySection& section, MetricSink& sink) {
  sink.family("memdiag_process_working_set_bytes",
              "Working set (resident memory) of a selected process: the top N by working set and by private "
              "bytes, and memdiagd itself.",
              MetricType::Gauge);
  per_process(section, sink, [](const ProcessMemory& p) { return std::optional<std::uint64_t>(p.resident_bytes); });
  sink.family("memdiag_process_working_set_peak_bytes", "Highest working set of a selected process since it started.",
              MetricType::Gauge);
  per_process(section, sink, [](const ProcessMemory& p) { return p.peak_resident_bytes; });
  sink.family("memdiag_process_committed_private_bytes",
              "Private memory a selected process has been promised (Windows: private bytes, its commit charge).",
              MetricType::Gauge);
  per_process(section, sink, [](const ProcessMemory& p) { return p.committed_private_bytes; });
  sink.family("memdiag_process_unbacked_promise_bytes",
              "Promise a selected process holds that no memory backs now (Windows: private bytes less the private "
              "working set; absent before Windows 10 21H2).",
              MetricType::Gauge);
  per_process(section, sink, [](const ProcessMemory& p) { return p.unbacked_promise_bytes; });
  sink.family("memdiag_process_page_faults_total", "Page faults of a selected process, soft and hard.",
              MetricType::Counter);
  per_process(section, sink, [](const ProcessMemory& p) { return p.page_faults_total; });
  gauge(sink, "memdiag_processes", "Processes listed by the system.", static_cast<double>(section.total_processes));
}

void render_windows_memory(const WindowsMemorySection& w, MetricSink& sink) {
  gauge(sink, "memdiag_commit_peak_bytes", "The highest commit charge since boot.",
        static_cast<double>(w.commit_peak_bytes));
  gauge(sink, "memdiag_system_cache_bytes", "The system working set: the file cache and the kernel's pageable memory.",
        static_cast<double>(w.system_cache_bytes));
  sink.family("memdiag_kernel_pool_bytes", "Kernel pool memory: paged (may be paged out) and nonpaged.",
              MetricType::Gauge);
  sink.sample({{"pool", "paged"}}, static_cast<double>(w.kernel_paged_pool_bytes));
  sink.sample({{"pool", "nonpaged"}}, static_cast<double>(w.kernel_nonpaged_pool_bytes));
  if (w.memory_load_percent) {
    gauge(sink, "memdiag_memory_load_ratio", "Share of physical memory in use, as Windows reports it (0..1).",
          *w.memory_load_percent / 100.0);
  }
  gauge(sink, "memdiag_system_processes", "Processes on the system.", w.processes);
  gauge(sink, "memdiag_system_threads", "Threads on the system.", w.threads);
  gauge(sink, "memdiag_system_handles", "Open handles on the system.", w.handles);
  if (w.low_memory) {
    gauge(sink, "memdiag_low_memory",
          "1 while Windows's low-memory resource notification is signaled (available memory below the system's low "
          "threshold).",
          *w.low_memory ? 1 : 0);
    sink.family("memdiag_low_memory_signals_total", "Times the low-memory resource notification turned signaled.",
                MetricType::Counter);
    sink.sample({}, static_cast<double>(w.low_memory_signals_total));
  }
}

void render_windows_paging(const WindowsPagingSection& p, MetricSink& sink) {
  const auto counter = [&](std::string_view name, std::string_view help, const std::optional<std::uint64_t>& v) {
    if (!v) return;
    sink.family(name, help, MetricType::Counter);
    sink.sample({}, static_cast<double>(*v));
  };
  counter("memdiag_paging_page_faults_total",
          "Page faults, soft and hard (PDH counter Memory, Page Faults/sec, raw).", p.page_faults_total);
  counter("memdiag_paging_hard_faults_total",
          "Reads from disk to resolve page faults (PDH counter Memory, Page Reads/sec, raw): trimmed working sets coming "
          "back.",
          p.hard_faults_total);
  counter("memdiag_paging_pages_input_total",
          "Pages read from disk to resolve page faults (PDH counter Memory, Pages Input/sec).", p.pages_input_total);
  counter("memdiag_paging_pages_output_total",
          "Pages written to disk to free memory (PDH counter Memory, Pages Output/sec).", p.pages_output_total);
}

}  // namespace memdiag::prom
