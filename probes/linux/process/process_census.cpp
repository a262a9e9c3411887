// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/process_census.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

#include <charconv>

#include "probes/core/process_selection.hpp"
#include "probes/linux/process/proc_process_scanner.hpp"
#include "probes/linux/process/promise_not_due.hpp"

namespace memdiag {

ProcessCensus::ProcessCensus(const KernelPaths& paths, const ProcessOptions& options, BpfScannerOpener open_bpf,
                             int self_pid)
    : paths_(paths),
      options_(options),
      open_bpf_(std::move(open_bpf)),
      self_pid_(self_pid),
      mountinfo_(paths.procfs + "/self/mountinfo"),
      max_map_count_file_(paths.procfs + "/sys/vm/max_map_count", KernelFile::Reads::kOneRecord, 64),
      meminfo_file_(paths.procfs + "/meminfo", KernelFile::Reads::kOneRecord) {}

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int own_pid_in(const std::string& procfs) {
  char target[32];
  const ssize_t n = ::readlink((procfs + "/self").c_str(), target, sizeof target);
  int pid = 0;
  if (n > 0 && std::from_chars(target, target + n, pid).ec == std::errc() && pid > 0) return pid;
  return ::getpid();
}

Status ProcessCensus::try_bpf() {
  const auto now = std::chrono::steady_clock::now();
  if (!open_bpf_) return make_error("this memdiagd was built without eBPF (cmake -DMEMDIAG_BPF=OFF)");
  if (bpf_failure_ && now - bpf_failed_at_ < kRetryLoadAfter) return *bpf_failure_;
  auto opened = open_bpf_(hierarchy_);
  if (!opened) {
    bpf_failure_ = make_error("eBPF task iterator: " + opened.error().message);
    bpf_failed_at_ = now;
    return *bpf_failure_;
  }
  scanner_ = std::move(opened).value();
  bpf_failure_.reset();
  return Ok{};
}

Status ProcessCensus::probe() {
  // Without a memory hierarchy processes are still counted; only their cgroups are unnamed.
  auto found = find_memory_hierarchy(paths_, mountinfo_);
  if (found) {
    hierarchy_ = std::move(found).value();
    hierarchy_problem_.clear();
  } else {
    hierarchy_.reset();
    hierarchy_problem_ = "processes are not attributed to cgroups: " + found.error().message;
  }
  scanner_.reset();
  switch (options_.process_scan) {
    case ProcessScanMode::kBpfIter:
      return try_bpf();
    case ProcessScanMode::kAuto:
      if (try_bpf()) return Ok{};
      [[fallthrough]];
    case ProcessScanMode::kProcfs:
      scanner_ = make_procfs_scanner();
      return Ok{};
  }
  return make_error("unknown process scan mode");
}

std::unique_ptr<ProcessScanner> ProcessCensus::make_procfs_scanner() const {
  // Without a memory hierarchy there is no telling which line of PID/cgroup to read.
  return std::make_unique<ProcProcessScanner>(paths_.procfs,
                                              hierarchy_ ? std::optional(hierarchy_->version) : std::nullopt);
}

Expected<std::uint64_t> ProcessCensus::read_max_map_count() {
  auto text = max_map_count_file_.read();
  if (!text) return text.error();
  std::string_view v = *text;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
    return make_error(max_map_count_file_.path() + ": not a number: '" + std::string(v.substr(0, 32)) + "'");
  }
  return value;
}

std::optional<std::uint64_t> ProcessCensus::read_commit(ProcessSelectionOptions& selection) {
  auto text = meminfo_file_.read();
  if (!text || !parse_meminfo(*text, meminfo_)) return std::nullopt;
  std::optional<std::uint64_t> committed, anon, shmem, swap_total, swap_free;
  for (const MeminfoEntry& e : meminfo_) {
    if (e.name == "Committed_AS") committed = e.value;
    else if (e.name == "AnonPages") anon = e.value;
    else if (e.name == "Shmem") shmem = e.value;
    else if (e.name == "SwapTotal") swap_total = e.value;
    else if (e.name == "SwapFree") swap_free = e.value;
  }
  if (!committed) return anon;
  selection.commit_charge_bytes = committed;
  if (!anon || !shmem) return anon;
  const std::uint64_t swap_used =
      swap_total && swap_free && *swap_total > *swap_free ? *swap_total - *swap_free : 0;
  const std::uint64_t backed = *anon + *shmem + swap_used;
  selection.node_unbacked_bytes = *committed > backed ? *committed - backed : 0;
  return anon;
}

bool ProcessCensus::pids_name_procfs_processes() const {
  // /proc numbers processes in its own pid namespace; the eBPF iterator in the initial one.
  // They agree when this daemon is found under the pid /proc gives it, with its own name (the
  // process's, which the iterator reports: not this scanning thread's).
  if (scanner_->mode() != "bpf_iter") return true;
  std::string buffer;
  auto comm = read_file_once(paths_.procfs + "/self/comm", buffer);
  if (!comm) return false;
  std::string_view own = *comm;
  while (!own.empty() && own.back() == '\n') own.remove_suffix(1);
  for (const ProcessMaps& p : processes_) {
    if (p.pid == self_pid_) return p.comm_view() == own;
  }
  return false;
}

void ProcessCensus::read_not_due_promises(const ProcessSelectionOptions& selection) {
  not_due_cpu_seconds_ = 0;
  if (!pids_name_procfs_processes()) return;
  // Twice the holders shown: a holder whose promise turns out to be stacks makes room for the
  // next. Each read is one /proc/PID/maps, streamed (megabytes near vm.max_map_count, tens of
  // milliseconds of CPU), so a holder's last reading is kept while its private size stays the
  // same (a thread or a file map coming or going changes VmData), and changed holders are read
  // again only once the reading's own budget allows: until then the last reading stands
  // (clamped to the private size now) and a new holder's promise is shown whole.
  const auto now = std::chrono::steady_clock::now();
  const bool may_read = now >= next_not_due_read_at_;
  const double cpu_before = thread_cpu_seconds();
  bool read_any = false;
  std::unordered_map<int, NotDueReading> kept;
  for (std::uint32_t i : promise_candidates(processes_, selection, 2 * selection.top_n)) {
    ProcessMaps& p = processes_[i];
    NotDueReading reading;
    const auto last = not_due_readings_.find(p.pid);
    const bool have_last = last != not_due_readings_.end();
    if (have_last && (!may_read || last->second.committed_private_bytes == p.committed_private_bytes)) {
      reading = last->second;
    } else if (may_read) {
      auto read = read_promise_not_due(paths_.procfs + "/" + std::to_string(p.pid) + "/maps");
      read_any = true;
      if (!read) continue;  // exited meanwhile, or unreadable: its figure stays whole
      reading = {p.committed_private_bytes, *read};
    } else {
      continue;
    }
    p.thread_stack_bytes = std::min(reading.not_due.thread_stack_bytes, p.committed_private_bytes);
    p.private_file_bytes =
        std::min(reading.not_due.private_file_bytes, p.committed_private_bytes - p.thread_stack_bytes);
    p.not_due_read = true;
    kept.emplace(p.pid, reading);
  }
  not_due_readings_ = std::move(kept);
  if (read_any) {
    not_due_cpu_seconds_ = thread_cpu_seconds() - cpu_before;
    next_not_due_read_at_ =
        now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(not_due_cpu_seconds_ * kNotDueCostFactor));
  }
}

Expected<ProcessSection> ProcessCensus::take() {
  const auto started = std::chrono::steady_clock::now();
  // Serving from /proc in auto mode: the iterator may load now (a capability granted, BTF
  // installed); try_bpf() limits the attempts to one a minute.
  if (options_.process_scan == ProcessScanMode::kAuto && scanner_->mode() != "bpf_iter") {
    auto procfs = std::move(scanner_);
    if (!try_bpf()) scanner_ = std::move(procfs);
  }

  std::uint64_t max_map_count = kDefaultMaxMapCount;
  if (auto read = read_max_map_count()) {
    max_map_count = *read;
    max_map_count_problem_.clear();
  } else {
    max_map_count_problem_ = "ratios use the default vm.max_map_count 65530: " + read.error().message;
  }

  if (auto scanned = scanner_->scan(processes_); !scanned) {
    // The iterator broke at run time: in auto mode /proc takes over (and the iterator is tried
    // again after kRetryLoadAfter); the sampler would never probe a supported source again.
    if (options_.process_scan != ProcessScanMode::kAuto || scanner_->mode() != "bpf_iter") return scanned.error();
    bpf_failure_ = make_error("eBPF task iterator: " + scanned.error().message);
    bpf_failed_at_ = std::chrono::steady_clock::now();
    scanner_ = make_procfs_scanner();
    if (auto again = scanner_->scan(processes_); !again) return again.error();
  }

  ProcessSelectionOptions selection;
  selection.top_n = options_.top_processes;
  selection.threshold_ratio = options_.map_areas_threshold;
  selection.max_above_threshold = options_.max_above_threshold;
  selection.max_cgroups = options_.max_cgroups;
  selection.self_pid = self_pid_;
  // After the scan: a promise made while it ran is in the charge read now.
  const std::optional<std::uint64_t> anon_pages = read_commit(selection);
  read_not_due_promises(selection);
  const ProcessScanner& scanner = *scanner_;
  ProcessSection section = select_processes(processes_, max_map_count, selection,
                                            [&scanner](std::uint64_t key) { return scanner.cgroup_path(key); });
  const ProcessScanProblems& problems = scanner.problems();
  vanished_total_ += problems.vanished;
  section.mode = scanner.mode();
  section.anon_pages_bytes = anon_pages;
  section.vanished_total = vanished_total_;
  section.unreadable = problems.unreadable;
  section.malformed = problems.malformed;
  const auto finished = std::chrono::steady_clock::now();
  section.scan_seconds = std::chrono::duration<double>(finished - started).count();
  section.scanned_at = std::chrono::system_clock::now();
  return section;
}

std::string ProcessCensus::degraded() const {
  std::string reasons;
  auto add = [&reasons](const std::string& reason) {
    if (reason.empty()) return;
    if (!reasons.empty()) reasons += "; ";
    reasons += reason;
  };
  if (bpf_failure_ && options_.process_scan == ProcessScanMode::kAuto) {
    add("reading /proc, hundreds of times slower, because " + bpf_failure_->message);
  }
  // /proc names cgroups from PID/cgroup itself; only the eBPF scanner needs the hierarchy.
  if (scanner_ && scanner_->mode() == "bpf_iter") add(hierarchy_problem_);
  add(max_map_count_problem_);
  if (scanner_ && !scanner_->problems().first.empty()) {
    add("processes skipped, unreadable or malformed (first: " + scanner_->problems().first + ")");
  }
  return reasons;
}

}  // namespace memdiag
