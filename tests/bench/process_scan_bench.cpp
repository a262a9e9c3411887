// SPDX-License-Identifier: Apache-2.0
// What a full scan of every process's map count and memory costs (the process source's
// benchmark), against real processes created for the purpose: memdiag-map-areas-helper
// (tests/helpers) with --mappings M --copies N, i.e. N processes of M separate mappings each
// (defaults 2,000 x 200), started in its own v1 memory cgroup
// /sys/fs/cgroup/memory/memdiag-process-bench-<pid> (memory.limit_in_bytes 4G) when that
// hierarchy exists and this runs as root, else without a cgroup. Before anything is timed, each
// scanner's one scan is checked against the helper: it must see all N helper processes with
// exactly the map count the helper reported.
//
//   ProcessScan/bpf_iter           TaskMapsIterator::scan(): the eBPF task iterator (needs root,
//                                  BTF and a build with eBPF; otherwise reported as an error)
//   ProcessScan/procfs             ProcProcessScanner::scan() on /proc: PID/status, PID/maps,
//                                  PID/cgroup of every process
//   ProcessScan/bare_newline_loop  the anchor: bare C over the same pids and the same three
//                                  files (getdents64 of /proc kept open, openat relative to it,
//                                  read() with a 64 KiB buffer to EOF, count '\n', close), for
//                                  every pid (kernel threads too)
//   ProcessScan/bare_same_syscalls a tighter floor: the syscalls the scanner makes (status and
//                                  cgroup in one read each, maps to EOF, kernel threads: status
//                                  only), newlines counted
//
// Each reports process CPU time per full scan (the CPU column, name suffix /process_time; the
// Time column is wall time), with counters: processes (the scanner's records; the bare loop:
// numeric /proc entries, kernel threads included), maps_total (the scanner's sum of map counts;
// the bare loop: newlines of all maps files), helper_procs and helper_maps (the same over the
// helper's processes only). Unless --benchmark_repetitions is given, it runs 5 repetitions in
// random interleaving order (--benchmark_enable_random_interleaving) so the machine's noise hits
// the three alike; figures are medians. The summary after the table gives procfs / bare loop
// (issue target <= 1.3), the eBPF scan's CPU time (target < 2 ms) and procfs / bpf_iter.
//
// Everything started or created is removed at the end, also on error, at exit() and on fatal
// signals (SIGINT, SIGTERM, ...): the helper is stopped (it kills and reaps its copies), every
// task left in the cgroup is killed, the cgroup is removed. The helper and its copies die with
// this process even on SIGKILL (PR_SET_PDEATHSIG); a cgroup left by a run killed that way is
// removed at the next start. The last line says what was removed (`... 0 left`).
//
// Own flags (before or among Google Benchmark's): --processes=N (default 2000), --maps=M
// (default 200), --helper=PATH (default: memdiag-map-areas-helper next to this binary).
#include <benchmark/benchmark.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "probes/core/process_record.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/process/proc_process_scanner.hpp"
#include "tests/bench/info_lines.hpp"
#include "tests/bench/recording_reporter.hpp"
#include "probes/linux/process/process_source.hpp"
#include "tests/support/exit_cleanup.hpp"
#include "tests/support/scratch_memcg.hpp"
#include "tests/support/write_text.hpp"
#ifdef MEMDIAG_HAVE_BPF
#include "probes/bpf/bpf_process_scanner.hpp"
#include "probes/bpf/task_maps_iterator.hpp"
#endif

namespace {

using memdiag::bench::g_info;  // stderr when stdout carries JSON or CSV
using memdiag::bench::info;
using memdiag::bench::RecordingReporter;
using memdiag::test_support::kV1MemoryRoot;
using memdiag::test_support::sleep_ms;
using memdiag::test_support::write_text;

constexpr const char* kV1Root = kV1MemoryRoot;
constexpr const char* kPrefix = "memdiag-process-bench-";
constexpr const char* kHelperName = "memdiag-map-areas-helper";
constexpr double kBpfTargetMs = 2;
constexpr double kProcfsRatioTarget = 1.3;

constexpr const char* kBpf = "ProcessScan/bpf_iter";
constexpr const char* kProcfs = "ProcessScan/procfs";
constexpr const char* kBare = "ProcessScan/bare_newline_loop";
constexpr const char* kBareSame = "ProcessScan/bare_same_syscalls";
constexpr const char* kSourceSample = "ProcessSource/sample_bpf_iter";

// --- What this run starts and creates, and its removal whatever happens. ---
// Plain arrays and sig_atomic_t: the signal handler reads them. The path is set before the
// cgroup is created and the flag after.

char g_cgroup[256];
volatile sig_atomic_t g_cgroup_created = 0;
volatile sig_atomic_t g_helper = 0;  // the helper's pid, 0 when none

// Async-signal-safe: kill what is left in the cgroup, rmdir, retry on EBUSY for up to ~10 s
// (2,000 exiting processes take a while to leave). true when gone.
bool remove_cgroup(const char* path) { return memdiag::test_support::remove_memcg(path, 500, 20); }

// Idempotent. The helper first: SIGTERM makes it kill and reap its copies; it gets 10 s, then
// SIGKILL (its copies then die by PR_SET_PDEATHSIG and are killed through the cgroup too).
void release_everything() {
  if (const pid_t helper = g_helper; helper > 0) {
    ::kill(helper, SIGTERM);
    bool reaped = false;
    for (int i = 0; i < 1000 && !reaped; ++i) {
      const pid_t r = ::waitpid(helper, nullptr, WNOHANG);
      reaped = r == helper || (r < 0 && errno == ECHILD);
      if (!reaped) sleep_ms(10);
    }
    if (!reaped) {
      ::kill(helper, SIGKILL);
      while (::waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    g_helper = 0;
  }
  if (g_cgroup_created && remove_cgroup(g_cgroup)) g_cgroup_created = 0;
}

// Cgroups left by a run that could not clean up (SIGKILL): those whose pid no longer exists.
// Assumes one pid namespace for all runs sharing this cgroupfs.
void remove_leftovers() {
  DIR* dir = ::opendir(kV1Root);
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  const std::size_t prefix_len = std::strlen(kPrefix);
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_type != DT_DIR || std::strncmp(e->d_name, kPrefix, prefix_len) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(e->d_name + prefix_len, &end, 10);
    if (end == e->d_name + prefix_len || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(std::string(kV1Root) + "/" + e->d_name);
  }
  ::closedir(dir);
  for (const auto& path : stale) {
    info("removing %s, left by an earlier run that was killed\n", path.c_str());
    if (!remove_cgroup(path.c_str())) std::fprintf(stderr, "cannot remove %s: %s\n", path.c_str(), std::strerror(errno));
  }
}

// --- The helper. ---

struct Setup {
  int processes = 2000;
  int maps = 200;
  std::string helper_path;
  bool in_cgroup = false;
  std::string no_cgroup_reason;
  int helper_pid = 0;
  long helper_maps = 0;             // map count of each helper process, as the helper reported it
  std::vector<int> helper_pids;     // sorted: the helper and its copies
  bool vsyscall = false;            // maps files show a [vsyscall] line
};
Setup g_setup;

std::string default_helper_path() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return kHelperName;
  std::string path(exe, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + kHelperName;
}

// Creates the cgroup (if it can); why not, in `reason`.
bool create_cgroup(std::string& reason) {
  if (::geteuid() != 0) {
    reason = "not root";
    return false;
  }
  if (::access((std::string(kV1Root) + "/memory.limit_in_bytes").c_str(), F_OK) != 0) {
    reason = std::string("no cgroup v1 memory hierarchy at ") + kV1Root;
    return false;
  }
  std::snprintf(g_cgroup, sizeof g_cgroup, "%s/%s%d", kV1Root, kPrefix, static_cast<int>(::getpid()));
  if (!memdiag::test_support::create_memcg(g_cgroup, 4ULL << 30, g_cgroup_created, reason)) {
    if (g_cgroup_created) {
      remove_cgroup(g_cgroup);
      g_cgroup_created = 0;
    }
    return false;
  }
  return true;
}

std::vector<int> read_pid_list(const std::string& path) {
  std::vector<int> pids;
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    int pid = 0;
    while (std::fscanf(f, "%d", &pid) == 1) pids.push_back(pid);
    std::fclose(f);
  }
  std::sort(pids.begin(), pids.end());
  return pids;
}

// Starts the helper (in the cgroup), waits for its "ready" line and checks its processes.
bool start_helper(Setup& setup, std::string& error) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const std::string maps = std::to_string(setup.maps), copies = std::to_string(setup.processes);
  const std::string procs = setup.in_cgroup ? std::string(g_cgroup) + "/cgroup.procs" : std::string();
  const pid_t self = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(127);
    if (!procs.empty() && !write_text(procs, "0")) {
      std::fprintf(stderr, "cannot join %s: %s\n", procs.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    ::dup2(out[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::execl(setup.helper_path.c_str(), setup.helper_path.c_str(), "--mappings", maps.c_str(), "--copies", copies.c_str(),
            static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot run %s: %s\n", setup.helper_path.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  g_helper = pid;
  ::close(out[1]);
  // "ready pid=<pid> maps=<n> copies=<k>\n", within 120 s (forking 2,000 copies takes a few).
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      error = "the helper did not print its ready line within 120 s";
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    char buf[256];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      error = "the helper exited before it was ready (see its message above)";
      break;
    }
    line.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (!error.empty()) return false;
  int ready_pid = 0;
  long ready_maps = 0, ready_copies = 0;
  if (std::sscanf(line.c_str(), "ready pid=%d maps=%ld copies=%ld", &ready_pid, &ready_maps, &ready_copies) != 3 ||
      ready_pid != pid || ready_copies != setup.processes) {
    error = "unexpected line from the helper: " + line.substr(0, line.find('\n'));
    return false;
  }
  setup.helper_pid = pid;
  setup.helper_maps = ready_maps;
  // The helper and its children (PR_SET_PDEATHSIG keeps them from outliving it).
  setup.helper_pids = read_pid_list("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  setup.helper_pids.push_back(pid);
  std::sort(setup.helper_pids.begin(), setup.helper_pids.end());
  if (static_cast<int>(setup.helper_pids.size()) != setup.processes) {
    error = "the helper has " + std::to_string(setup.helper_pids.size()) + " processes, not " +
            std::to_string(setup.processes);
    return false;
  }
  if (setup.in_cgroup) {
    const auto in_cgroup = read_pid_list(std::string(g_cgroup) + "/cgroup.procs");
    if (in_cgroup != setup.helper_pids) {
      error = "the cgroup holds " + std::to_string(in_cgroup.size()) + " processes, not the helper's " +
              std::to_string(setup.helper_pids.size());
      return false;
    }
  }
  return true;
}

bool has_vsyscall() {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return false;
  char line[512];
  bool found = false;
  while (std::fgets(line, sizeof line, f) != nullptr) found = found || std::strstr(line, "[vsyscall]") != nullptr;
  std::fclose(f);
  return found;
}

// Helper processes still alive after the cleanup (a reused pid is told apart by its name).
int helper_processes_alive() {
  int alive = 0;
  for (int pid : g_setup.helper_pids) {
    char path[64], comm[32] = "";
    std::snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (std::FILE* f = std::fopen(path, "r")) {
      if (std::fgets(comm, sizeof comm, f) != nullptr && std::strncmp(comm, kHelperName, 15) == 0) ++alive;
      std::fclose(f);
    }
  }
  return alive;
}

// --- Tallies (outside the timed loops). ---

struct Tally {
  double processes = 0, maps_total = 0, helper_procs = 0, helper_maps = 0, helper_exact = 0;
};

bool is_helper(int pid) {
  return std::binary_search(g_setup.helper_pids.begin(), g_setup.helper_pids.end(), pid);
}

Tally tally(const std::vector<memdiag::ProcessMaps>& records) {
  Tally t;
  t.processes = static_cast<double>(records.size());
  for (const auto& r : records) {
    t.maps_total += r.map_count;
    if (!is_helper(r.pid)) continue;
    t.helper_procs += 1;
    t.helper_maps += r.map_count;
    t.helper_exact += r.map_count == static_cast<std::uint32_t>(g_setup.helper_maps) ? 1 : 0;
  }
  return t;
}

void set_counters(benchmark::State& state, const Tally& t) {
  state.counters["processes"] = t.processes;
  state.counters["maps_total"] = t.maps_total;
  state.counters["helper_procs"] = t.helper_procs;
  state.counters["helper_maps"] = t.helper_maps;
}

// Wall time per iteration as a counter ("wall_us"), so the summary can give it next to CPU.
class WallClock {
 public:
  WallClock() : start_(std::chrono::steady_clock::now()) {}
  void report(benchmark::State& state) const {
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    state.counters["wall_us"] = benchmark::Counter(us, benchmark::Counter::kAvgIterations);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// --- The scanners: made once, warm, reused by every run of their benchmark. ---

std::unique_ptr<memdiag::ProcProcessScanner> g_procfs;
std::string g_procfs_error;
#ifdef MEMDIAG_HAVE_BPF
std::unique_ptr<memdiag::TaskMapsIterator> g_bpf;
#endif
std::string g_bpf_error = "built without eBPF (MEMDIAG_BPF=OFF)";

void open_scanners() {
  memdiag::KernelFile mountinfo("/proc/self/mountinfo");
  auto hierarchy = memdiag::find_memory_hierarchy(memdiag::KernelPaths{}, mountinfo);
  const auto version = hierarchy ? hierarchy->version : memdiag::CgroupVersion::kV2;
  g_procfs = std::make_unique<memdiag::ProcProcessScanner>("/proc", version);
#ifdef MEMDIAG_HAVE_BPF
  auto opened = memdiag::TaskMapsIterator::open();
  if (opened) {
    g_bpf = std::move(*opened);
    g_bpf_error.clear();
  } else {
    g_bpf_error = opened.error().message;
  }
#endif
}

void close_scanners() {
  g_procfs.reset();
#ifdef MEMDIAG_HAVE_BPF
  g_bpf.reset();
#endif
}

// --- The anchor: bare C, the same pids and files, newlines counted. ---

struct Bare {
  int proc_fd = -1;
  alignas(8) char dents[1 << 16];
  char buf[1 << 16];
};
Bare* g_bare = nullptr;

struct BareResult {
  long pids = 0, newlines = 0;
};

long count_newlines(const char* p, std::size_t n) {
  long lines = 0;
  for (std::size_t i = 0; i < n; ++i) lines += p[i] == '\n';
  return lines;
}

// open, read() with a 64 KiB buffer until it returns 0 (one_read: only once), close.
long count_file(int proc_fd, const char* path, char* buf, bool one_read, bool* has_mm = nullptr) {
  const int fd = ::openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long lines = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof Bare::buf);
    if (n <= 0) break;
    lines += count_newlines(buf, static_cast<std::size_t>(n));
    if (has_mm != nullptr) *has_mm = ::memmem(buf, static_cast<std::size_t>(n), "\nVmSize:", 8) != nullptr;
    if (one_read) break;
  }
  ::close(fd);
  return lines;
}

struct linux_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// How the anchor reads. kNaive (the anchor the target is about): every pid's status, maps
// and cgroup, each read to EOF. kSameSyscalls (a tighter floor): the syscalls the procfs scanner
// makes: status and cgroup in one read each, maps to EOF, and for a pid whose status has no
// VmSize (a kernel thread) nothing after the status.
enum class BareMode { kNaive, kSameSyscalls };

// One pass over every numeric entry of /proc. per_pid (outside the timing only): each pid's
// maps newlines.
BareResult bare_scan(BareMode mode, std::vector<std::pair<int, long>>* per_pid) {
  BareResult result;
  Bare& b = *g_bare;
  const bool same = mode == BareMode::kSameSyscalls;
  ::lseek(b.proc_fd, 0, SEEK_SET);
  char path[64];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, b.proc_fd, b.dents, sizeof b.dents);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const linux_dirent64*>(b.dents + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (name[0] < '1' || name[0] > '9') continue;
      ++result.pids;
      const int len = std::snprintf(path, sizeof path, "%s/status", name);
      bool has_mm = true;
      result.newlines += count_file(b.proc_fd, path, b.buf, same, same ? &has_mm : nullptr);
      long maps = 0;
      if (has_mm) {
        std::memcpy(path + len - 6, "maps", 5);
        maps = count_file(b.proc_fd, path, b.buf, false);
        result.newlines += maps;
        std::memcpy(path + len - 6, "cgroup", 7);
        result.newlines += count_file(b.proc_fd, path, b.buf, same);
      }
      if (per_pid != nullptr) per_pid->emplace_back(std::atoi(name), maps);
    }
  }
  return result;
}

Tally tally_bare(const std::vector<std::pair<int, long>>& per_pid) {
  Tally t;
  const long vsyscall = g_setup.vsyscall ? 1 : 0;
  t.processes = static_cast<double>(per_pid.size());
  for (const auto& [pid, lines] : per_pid) {
    t.maps_total += static_cast<double>(lines);
    if (!is_helper(pid)) continue;
    t.helper_procs += 1;
    t.helper_maps += static_cast<double>(lines - vsyscall);
    t.helper_exact += lines - vsyscall == g_setup.helper_maps ? 1 : 0;
  }
  return t;
}

// --- Benchmarks. ---

void BM_Bpf(benchmark::State& state) {
#ifdef MEMDIAG_HAVE_BPF
  if (g_bpf) {
    std::vector<memdiag::ProcessMaps> out;
    if (!g_bpf->scan(out)) {  // warm: the buffers reach their size
      state.SkipWithError("the eBPF task iterator failed to scan");
      return;
    }
    const WallClock wall;
    for (auto _ : state) {
      const auto status = g_bpf->scan(out);
      if (!status) {
        state.SkipWithError(("bpf_iter scan failed: " + status.error().message).c_str());
        return;
      }
      benchmark::DoNotOptimize(out.data());
    }
    wall.report(state);
    set_counters(state, tally(out));
    return;
  }
#endif
  state.SkipWithError(("bpf_iter unavailable: " + g_bpf_error).c_str());
}

// What the daemon pays per sample: the eBPF scan, naming the cgroups, choosing the exported
// processes and summing per cgroup, into a Snapshot.
void BM_SourceSample(benchmark::State& state) {
#ifdef MEMDIAG_HAVE_BPF
  memdiag::ProcessOptions options;
  options.process_scan = memdiag::ProcessScanMode::kBpfIter;
  memdiag::ProcessSource source(
      memdiag::KernelPaths{}, options,
      [](const std::optional<memdiag::MemoryHierarchy>& h) { return memdiag::BpfProcessScanner::open("", h); },
      ::getpid());
  memdiag::Snapshot snapshot;
  if (auto probed = source.probe(); !probed || !source.sample(snapshot)) {  // warm
    state.SkipWithError("the process source cannot sample with the eBPF iterator");
    return;
  }
  const WallClock wall;
  for (auto _ : state) {
    memdiag::Snapshot out;
    const auto status = source.sample(out);
    if (!status) {
      state.SkipWithError(("process source sample failed: " + status.error().message).c_str());
      return;
    }
    benchmark::DoNotOptimize(out.processes);
  }
  wall.report(state);
  state.counters["processes"] = static_cast<double>(snapshot.processes->processes);
  state.counters["selected"] = static_cast<double>(snapshot.processes->selected.size());
  return;
#endif
  state.SkipWithError(("bpf_iter unavailable: " + g_bpf_error).c_str());
}

void BM_Procfs(benchmark::State& state) {
  std::vector<memdiag::ProcessMaps> out;
  if (!g_procfs || !g_procfs->scan(out)) {
    state.SkipWithError("the procfs scanner failed to scan /proc");
    return;
  }
  const WallClock wall;
  for (auto _ : state) {
    const auto status = g_procfs->scan(out);
    if (!status) {
      state.SkipWithError(("procfs scan failed: " + status.error().message).c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  wall.report(state);
  set_counters(state, tally(out));
}

void BM_Bare(benchmark::State& state, BareMode mode) {
  BareResult r;
  const WallClock wall;
  for (auto _ : state) {
    r = bare_scan(mode, nullptr);
    benchmark::DoNotOptimize(r);
  }
  wall.report(state);
  std::vector<std::pair<int, long>> per_pid;
  per_pid.reserve(static_cast<std::size_t>(r.pids) + 64);
  bare_scan(mode, &per_pid);
  set_counters(state, tally_bare(per_pid));
}

void register_benchmarks() {
  const auto cpu = [](benchmark::internal::Benchmark* b) { b->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond); };
  cpu(benchmark::RegisterBenchmark(kBpf, BM_Bpf));
  cpu(benchmark::RegisterBenchmark(kProcfs, BM_Procfs));
  cpu(benchmark::RegisterBenchmark(kBare, BM_Bare, BareMode::kNaive));
  cpu(benchmark::RegisterBenchmark(kBareSame, BM_Bare, BareMode::kSameSyscalls));
  cpu(benchmark::RegisterBenchmark(kSourceSample, BM_SourceSample));
}

// --- The check before timing: every scanner sees the helper's processes and their maps. ---

// Prints one line per scanner; false if procfs, the bare loop or a loaded bpf_iter disagrees.
bool check_scanners() {
  const double expected_maps = static_cast<double>(g_setup.helper_maps) * g_setup.processes;
  const auto report = [&](const char* name, const Tally& t) {
    const bool agree = t.helper_procs == g_setup.processes && t.helper_exact == g_setup.processes &&
                       t.helper_maps == expected_maps;
    info("check: %-10s %.0f/%d helper processes, %.0f maps (expected %.0f), %.0f exact: %s\n", name, t.helper_procs,
         g_setup.processes, t.helper_maps, expected_maps, t.helper_exact, agree ? "agree" : "DISAGREE");
    return agree;
  };
  bool ok = true;
  std::vector<memdiag::ProcessMaps> out;
#ifdef MEMDIAG_HAVE_BPF
  if (g_bpf) {
    if (const auto status = g_bpf->scan(out); !status) {
      info("check: bpf_iter   scan failed: %s: DISAGREE\n", status.error().message.c_str());
      ok = false;
    } else {
      ok = report("bpf_iter", tally(out)) && ok;
    }
  }
#endif
  if (!g_bpf_error.empty()) info("check: bpf_iter   not measured: %s\n", g_bpf_error.c_str());
  if (const auto status = g_procfs->scan(out); !status) {
    info("check: procfs     scan failed: %s: DISAGREE\n", status.error().message.c_str());
    ok = false;
  } else {
    ok = report("procfs", tally(out)) && ok;
    const auto& p = g_procfs->problems();
    if (p.vanished + p.unreadable + p.malformed > 0) {
      info("       procfs problems: %zu vanished, %zu unreadable, %zu malformed; first: %s\n", p.vanished, p.unreadable,
           p.malformed, p.first.c_str());
    }
  }
  std::vector<std::pair<int, long>> per_pid;
  bare_scan(BareMode::kNaive, &per_pid);
  ok = report("bare loop", tally_bare(per_pid)) && ok;
  return ok;
}

// --- The summary. ---

void print_summary(const RecordingReporter& recorded) {
  const auto line = [](const char* what, double value, const char* unit, const std::string& note) {
    if (value < 0) return;
    info("  %-34s %10.3f %-3s %s\n", what, value, unit, note.c_str());
  };
  const auto ms = [&recorded](const char* name) {
    const double us = recorded.cpu_us(name);
    return us < 0 ? -1.0 : us / 1000;
  };
  const auto wall = [&recorded](const char* name) {
    const double us = recorded.counter(name, "wall_us");
    if (us < 0) return std::string();
    char text[64];
    std::snprintf(text, sizeof text, "(wall %.3f ms)", us / 1000);
    return std::string(text);
  };
  const double bpf = ms(kBpf), procfs = ms(kProcfs), bare = ms(kBare), same = ms(kBareSame);
  const double processes = recorded.counter(kProcfs, "processes");
  info("\nsummary (process CPU per full scan, medians; %d helper processes x %ld maps%s, %.0f processes scanned):\n",
       g_setup.processes, g_setup.helper_maps, g_setup.in_cgroup ? ", in their own memory cgroup" : "", processes);
  line("bpf_iter scan", bpf, "ms",
       (bpf < 0 ? std::string() : std::string("target < 2 ms: ") + (bpf < kBpfTargetMs ? "met " : "MISSED ")) + wall(kBpf));
  if (bpf < 0 && !g_bpf_error.empty()) info("  %-34s %s\n", "bpf_iter scan", ("not measured: " + g_bpf_error).c_str());
  line("procfs scan", procfs, "ms", wall(kProcfs));
  line("bare newline loop (anchor)", bare, "ms", wall(kBare));
  if (procfs > 0 && bare > 0) {
    line("procfs / bare loop", procfs / bare, "",
         std::string("target <= 1.3: ") + (procfs / bare <= kProcfsRatioTarget ? "met" : "MISSED"));
  }
  line("bare loop, the scanner's syscalls", same, "ms", wall(kBareSame));
  if (procfs > 0 && same > 0) line("procfs / bare loop, same syscalls", procfs / same, "", "(no target: a tighter floor)");
  if (procfs > 0 && bpf > 0) line("procfs / bpf_iter", procfs / bpf, "", "");
  line("whole source sample (bpf_iter)", ms(kSourceSample), "ms", "scan + cgroup names + selection + sums " + wall(kSourceSample));
  const auto per_process = [&recorded](const char* name, double scan_ms) {
    const double n = recorded.counter(name, "processes");
    return scan_ms < 0 || n <= 0 ? -1.0 : scan_ms * 1000 / n;
  };
  line("per process: bpf_iter", per_process(kBpf, bpf), "us", "");
  line("per process: procfs", per_process(kProcfs, procfs), "us", "");
  line("per process: bare loop", per_process(kBare, bare), "us", "(per /proc entry, kernel threads included)");
}

// Takes --name=N (or --name N) out of argv (Google Benchmark refuses flags it does not know).
bool take_flag(int& argc, char** argv, const char* name, std::string& value) {
  const std::size_t len = std::strlen(name);
  bool found = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) != 0 || (argv[i][len] != '=' && argv[i][len] != '\0')) continue;
    int used = 1;
    if (argv[i][len] == '=') {
      value = argv[i] + len + 1;
    } else if (i + 1 < argc) {
      value = argv[i + 1];
      used = 2;
    } else {
      std::fprintf(stderr, "%s needs a value\n", name);
      std::exit(2);
    }
    for (int j = i; j + used < argc; ++j) argv[j] = argv[j + used];
    argc -= used;
    --i;
    found = true;
  }
  return found;
}

bool take_int_flag(int& argc, char** argv, const char* name, int min, int max, int& value) {
  std::string text;
  if (!take_flag(argc, argv, name, text)) return true;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < min || v > max) {
    std::fprintf(stderr, "%s: expected a number from %d to %d\n", name, min, max);
    return false;
  }
  value = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (!take_int_flag(argc, argv, "--processes", 1, 30000, g_setup.processes) ||
      !take_int_flag(argc, argv, "--maps", 0, 60000, g_setup.maps)) {
    return 2;
  }
  g_setup.helper_path = default_helper_path();
  take_flag(argc, argv, "--helper", g_setup.helper_path);
  bool console = true, repetitions = false, aggregates = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_format=", 19) == 0 && std::strcmp(argv[i] + 19, "console") != 0) console = false;
    if (std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0) repetitions = true;
    if (std::strstr(argv[i], "aggregates_only") != nullptr) aggregates = true;
  }
  if (!console) g_info = stderr;
  // By default 5 repetitions in random order, so noise hits the three benchmarks alike, and
  // only their aggregates shown.
  std::vector<char*> args(argv, argv + argc);
  char reps[] = "--benchmark_repetitions=5";
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  char display[] = "--benchmark_display_aggregates_only=true";
  if (!repetitions) {
    args.insert(args.begin() + 1, {reps, interleave});
    if (!aggregates) args.insert(args.begin() + 1, display);
  }
  int args_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;

  if (::access(g_setup.helper_path.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "cannot run the helper %s: %s (build target memdiag-map-areas-helper, or --helper=PATH)\n",
                 g_setup.helper_path.c_str(), std::strerror(errno));
    return 1;
  }
  memdiag::test_support::install_exit_cleanup(release_everything);
  int status = 1;
  {
    remove_leftovers();
    g_setup.in_cgroup = create_cgroup(g_setup.no_cgroup_reason);
    if (!g_setup.in_cgroup) info("note: no memory cgroup for the helper (%s)\n", g_setup.no_cgroup_reason.c_str());
    std::string error;
    const auto started = std::chrono::steady_clock::now();
    if (!start_helper(g_setup, error)) {
      std::fprintf(stderr, "starting the helper failed: %s\n", error.c_str());
    } else {
      info("helper: %d processes x %ld maps each (%d mappings created), pid %d, %s%s, ready in %.1f s\n",
           g_setup.processes, g_setup.helper_maps, g_setup.maps, g_setup.helper_pid,
           g_setup.in_cgroup ? "cgroup " : "no cgroup", g_setup.in_cgroup ? g_cgroup : "",
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      g_setup.vsyscall = has_vsyscall();
      static Bare bare;
      g_bare = &bare;
      bare.proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      open_scanners();
      const bool agree = check_scanners();
      register_benchmarks();
      RecordingReporter reporter(benchmark::CreateDefaultDisplayReporter());
      benchmark::RunSpecifiedBenchmarks(&reporter);
      print_summary(reporter);
      close_scanners();
      ::close(bare.proc_fd);
      status = agree ? 0 : 1;
      if (!agree) info("the scanners disagree with the helper (lines \"check:\" above)\n");
    }
  }
  benchmark::Shutdown();
  std::cout.flush();
  // The normal end: stop the helper, remove the cgroup, say what is left.
  const bool had_cgroup = g_cgroup_created;
  release_everything();
  memdiag::test_support::exit_cleanup_done();
  const int left_processes = helper_processes_alive();
  const bool helper_gone = left_processes == 0;
  const bool cgroup_gone = !had_cgroup || ::access(g_cgroup, F_OK) != 0;
  info("cleanup: helper stopped (%zu processes), cgroup %s: %d left\n", g_setup.helper_pids.size(),
       had_cgroup ? (cgroup_gone ? "removed" : "NOT REMOVED") : "none", left_processes + (cgroup_gone ? 0 : 1));
  if (!helper_gone || !cgroup_gone) status = 1;
  return status;
}
