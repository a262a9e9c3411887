// SPDX-License-Identifier: Apache-2.0
// What the eBPF reclaim-stall probe costs a workload that reclaims all the time (the probe's
// benchmark). Needs root and a cgroup v1 memory hierarchy at /sys/fs/cgroup/memory (v1 or
// hybrid); otherwise it prints "skipped: ..." and exits 0 without measuring anything.
//
// The workload: a child process in its own memory cgroup,
// /sys/fs/cgroup/memory/memdiag-bpfbench-<pid> with memory.limit_in_bytes 256 MiB, read()s a
// 512 MiB scratch file (/var/tmp/memdiag-bpfbench-<pid>.dat) from start to end in 1 MiB reads,
// over and over. The file's page cache is charged to the cgroup and twice its limit, so every
// pass evicts what the previous one cached: charges keep failing and the cgroup reclaims
// (memcg reclaim, the probe's "memcg" kind) thousands of times a second. By default the file is
// sparse: its pages are zero-filled in the page cache without disk I/O, which makes the reads
// CPU-bound and the reclaim rate high: the harsh case for the probe (--data-file writes real
// blocks instead; reads then come from the disk or the host's cache). The child does nothing
// with the bytes, so reclaim is as large a share of its time as a reader can make it.
//
// Rounds of --round-seconds each alternate, all in one run: without the probe, with it
// (ReclaimStallProbe::open() before the round, destroyed after it; neither is timed, and 50 ms
// pass before every round so deferred kernel work of an open or a detach is not charged to the
// next round), ..., without: --rounds "with" rounds, each between two "without" rounds, after a
// warm-up of two passes that fills the cgroup to its limit. Throughput is bytes read per second
// of the child's wall time (and per second of its CPU time; the share of the round it waited
// for a CPU, from /proc/self/schedstat, shows how much other load took). The figures: the
// medians of each kind and their ratio (the target: >= 0.99), and per "with" round its ratio to
// the mean of the two "without" rounds around it (cancels a steady drift of the machine): their
// median, and their mean with a 95% confidence interval, which says whether the run resolves
// 0.99 at all. The default is many short rounds (30 pairs of 0.5 s): on a shared machine a
// round's noise hardly shrinks with its length, so more pairs give a tighter interval in the
// same time. That reclaim really happens is checked: memory.failcnt of the cgroup must grow in
// every round and the probe must count the cgroup's memcg reclaims in every "with" round
// (otherwise the exit status is 1); the reclaims per second are printed.
//
// Also: the load+attach time (median of --opens timed open() calls, before the workload
// starts), and the per-event cost of each program as the kernel times it, from one extra
// "with" round with BPF run-time statistics on (kernel.bpf_stats_enabled): run_time_ns /
// run_count per program (what bpftool prog show prints as run_time_ns and run_cnt), the BPF
// time per memcg reclaim, and the BPF time as a share of the round: 1 minus that share is the
// ratio the probe's run time alone predicts, a figure the machine's noise hardly touches. The
// statistics are on only during that round: enabled through a BPF_ENABLE_STATS descriptor, the
// same kernel switch as the sysctl kernel.bpf_stats_enabled, which the kernel turns off again
// when the descriptor is closed, also if this process is killed (the sysctl file keeps reading
// its own value meanwhile); where that is unavailable, or with --stats-sysctl, by writing 1 to
// /proc/sys/kernel/bpf_stats_enabled, restored to its previous value on every exit path this
// process lives through (normal end, error, fatal signal; not SIGKILL).
//
// Everything created is removed at the end, also on error or a fatal signal (SIGINT, SIGTERM,
// ...); a cgroup or scratch file left by an earlier run that was killed (SIGKILL) is removed at
// the next start (its workload child dies with its parent: PR_SET_PDEATHSIG).
//
// Flags: --rounds=N pairs (default 30), --round-seconds=S (default 0.5), --opens=N (default 5),
// --file-mib=N (512), --limit-mib=N (256), --data-file, --stats-sysctl (enable the statistics
// by the sysctl even where the descriptor works), --json (one JSON object on stdout; the
// human summary then goes to stderr), --smoke (2 pairs of 0.25 s, 2 opens: a few seconds).
// The default run takes about 40 s.
#include <bpf/bpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/bpf/reclaim_stall_probe.hpp"
#include "tests/bench/info_lines.hpp"
#include "tests/support/exit_cleanup.hpp"
#include "tests/support/scratch_memcg.hpp"
#include "tests/support/write_text.hpp"

namespace {

using memdiag::bench::g_info;  // stderr when stdout carries the JSON line
using memdiag::bench::info;
using memdiag::test_support::sleep_ms;
using memdiag::test_support::write_text;

constexpr const char* kV1Root = memdiag::test_support::kV1MemoryRoot;
constexpr const char* kScratchDir = "/var/tmp";
constexpr const char* kPrefix = "memdiag-bpfbench-";
constexpr const char* kStatsSysctl = "/proc/sys/kernel/bpf_stats_enabled";
constexpr double kTarget = 0.99;
constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::size_t kReadSize = kMiB;
constexpr long kSettleMs = 50;  // pause before every round

// --- What this run creates, and its removal whatever happens. ---
// Plain arrays and sig_atomic_t: the signal handler reads them. Paths are set before the
// object is created and the flag after.

char g_cgroup[256];
char g_scratch[256];
volatile sig_atomic_t g_cgroup_created = 0;
volatile sig_atomic_t g_scratch_created = 0;
volatile sig_atomic_t g_child = 0;            // workload pid, 0 when none
volatile sig_atomic_t g_sysctl_written = 0;   // 1: the sysctl holds our '1', restore g_sysctl_before
volatile char g_sysctl_before = '0';
bool g_created_any = false;  // the final cleanup line is printed only if something was made

// Async-signal-safe: kill(2), waitpid(2), unlink(2), rmdir(2), open/write/close(2), nanosleep(2).
// Idempotent. The child goes first (its cgroup cannot be removed while it lives), then the file
// (its page cache, charged to the cgroup, is freed with it), then the cgroup.
void release_everything() {
  if (const pid_t child = g_child; child > 0) {
    ::kill(child, SIGKILL);
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
  }
  if (g_scratch_created) {
    ::unlink(g_scratch);
    g_scratch_created = 0;
  }
  // A reaped task can stay counted in the cgroup for a moment: retry for up to 2 s.
  if (g_cgroup_created && memdiag::test_support::remove_memcg(g_cgroup, 200, 10)) g_cgroup_created = 0;
  if (g_sysctl_written) {
    const int fd = ::open(kStatsSysctl, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      const char value = g_sysctl_before;
      if (::write(fd, &value, 1) == 1) g_sysctl_written = 0;
      ::close(fd);
    }
  }
}

// --- Small file helpers. ---

bool read_text(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n < 0) return false;
  out.assign(buf, static_cast<std::size_t>(n));
  return true;
}

std::int64_t read_u64(const std::string& path) {  // -1 if unreadable
  std::string text;
  if (!read_text(path, text)) return -1;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  return end == text.c_str() ? -1 : static_cast<std::int64_t>(v);
}

bool pid_is_dead(const char* suffix) {
  char* end = nullptr;
  const long pid = std::strtol(suffix, &end, 10);
  if (end == suffix || pid <= 0) return false;
  if (*end != '\0' && std::strcmp(end, ".dat") != 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Cgroups and scratch files left by a run that could not clean up (SIGKILL, e.g. a ctest
// timeout): those whose pid no longer exists. Assumes one pid namespace for all runs.
void remove_leftovers() {
  const std::size_t prefix_len = std::strlen(kPrefix);
  if (DIR* dir = ::opendir(kV1Root)) {
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_type == DT_DIR && std::strncmp(e->d_name, kPrefix, prefix_len) == 0 && pid_is_dead(e->d_name + prefix_len)) {
        stale.push_back(std::string(kV1Root) + "/" + e->d_name);
      }
    }
    ::closedir(dir);
    for (const auto& path : stale) {
      info("removing %s, left by an earlier run that was killed\n", path.c_str());
      for (int attempt = 0; attempt < 100; ++attempt) {
        if (std::FILE* procs = std::fopen((path + "/cgroup.procs").c_str(), "r")) {
          int pid = 0;
          while (std::fscanf(procs, "%d", &pid) == 1) ::kill(pid, SIGKILL);
          std::fclose(procs);
        }
        write_text(path + "/memory.force_empty", "0");
        if (::rmdir(path.c_str()) == 0 || errno != EBUSY) break;
        sleep_ms(20);
      }
      if (::access(path.c_str(), F_OK) == 0) std::fprintf(stderr, "cannot remove %s: %s\n", path.c_str(), std::strerror(errno));
    }
  }
  if (DIR* dir = ::opendir(kScratchDir)) {
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_type == DT_REG && std::strncmp(e->d_name, kPrefix, prefix_len) == 0 && pid_is_dead(e->d_name + prefix_len)) {
        stale.push_back(std::string(kScratchDir) + "/" + e->d_name);
      }
    }
    ::closedir(dir);
    for (const auto& path : stale) {
      info("removing %s, left by an earlier run that was killed\n", path.c_str());
      ::unlink(path.c_str());
    }
  }
}

// --- Options. ---

struct Options {
  int rounds = 30;
  double round_seconds = 0.5;
  int opens = 5;
  int file_mib = 512;
  int limit_mib = 256;
  bool data_file = false;
  bool stats_sysctl = false;  // enable BPF statistics through the sysctl, not a descriptor
  bool json = false;
  bool smoke = false;
};

bool parse_options(int argc, char** argv, Options& o) {
  auto number = [](const char* arg, const char* name, double lo, double hi, double& out) {
    const std::size_t len = std::strlen(name);
    if (std::strncmp(arg, name, len) != 0 || arg[len] != '=') return false;
    char* end = nullptr;
    out = std::strtod(arg + len + 1, &end);
    if (end == arg + len + 1 || *end != '\0' || !(out >= lo && out <= hi)) {
      std::fprintf(stderr, "%s: expected a number from %g to %g\n", name, lo, hi);
      std::exit(2);
    }
    return true;
  };
  // --smoke first, so explicit flags override what it sets.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      o.smoke = true;
      o.rounds = 2;
      o.round_seconds = 0.25;
      o.opens = 2;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    double v = 0;
    if (std::strcmp(a, "--smoke") == 0) continue;
    if (std::strcmp(a, "--json") == 0) {
      o.json = true;
    } else if (std::strcmp(a, "--data-file") == 0) {
      o.data_file = true;
    } else if (std::strcmp(a, "--stats-sysctl") == 0) {
      o.stats_sysctl = true;
    } else if (number(a, "--rounds", 1, 1000, v)) {
      o.rounds = static_cast<int>(v);
    } else if (number(a, "--round-seconds", 0.05, 600, v)) {
      o.round_seconds = v;
    } else if (number(a, "--opens", 1, 1000, v)) {
      o.opens = static_cast<int>(v);
    } else if (number(a, "--file-mib", 8, 65536, v)) {
      o.file_mib = static_cast<int>(v);
    } else if (number(a, "--limit-mib", 4, 65536, v)) {
      o.limit_mib = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--rounds=N] [--round-seconds=S] [--opens=N] [--file-mib=N] [--limit-mib=N] "
                   "[--data-file] [--stats-sysctl] [--json] [--smoke]\n",
                   argv[0]);
      return false;
    }
  }
  if (o.file_mib < 2 * o.limit_mib) {
    std::fprintf(stderr, "--file-mib must be at least twice --limit-mib, or the cgroup would not reclaim on every pass\n");
    return false;
  }
  return true;
}

// --- Clocks and statistics. ---

std::uint64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double min_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double max_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

double cv_percent(const std::vector<double>& v) {  // coefficient of variation
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size() - 1);
  return mean > 0 ? 100 * std::sqrt(var) / mean : 0;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// Half-width of the 95% confidence interval of the mean (Student's t), 0 for fewer than 2.
double ci95_half_width(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n < 2) return 0;
  static constexpr double kT[] = {12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23};  // df 1..10
  const std::size_t df = n - 1;
  const double t = df <= 10 ? kT[df - 1] : df < 20 ? 2.13 : df < 30 ? 2.07 : df < 60 ? 2.02 : 1.98;
  const double mean = mean_of(v);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(n - 1);
  return t * std::sqrt(var / static_cast<double>(n));
}

// --- The workload child. ---

struct Command {
  std::uint64_t max_ns = 0;     // 0: exit
  std::uint64_t max_bytes = 0;  // stop after this many bytes even if time is left
};

struct Result {
  std::uint64_t bytes = 0;
  std::uint64_t wall_ns = 0;
  std::uint64_t cpu_ns = 0;  // user + system of the child over the round
  std::uint64_t passes = 0;  // times it wrapped around the end of the file
  std::uint64_t wait_ns = 0;  // time runnable but waiting for a CPU (/proc/self/schedstat)
  std::int32_t error = 0;    // errno of a failed read
  std::int32_t pad = 0;
};

bool read_full(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_full(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Time this process has spent runnable but not running (second field of /proc/self/schedstat):
// how much of a round other load on the machine took away. 0 if schedstats are unavailable.
std::uint64_t runqueue_wait_ns(int schedstat_fd) {
  char text[128];
  const ssize_t n = schedstat_fd >= 0 ? ::pread(schedstat_fd, text, sizeof text - 1, 0) : -1;
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long run = 0, wait = 0;
  return std::sscanf(text, "%llu %llu", &run, &wait) == 2 ? wait : 0;
}

[[noreturn]] void child_main(pid_t parent, int cmd_fd, int res_fd) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGPIPE}) ::signal(sig, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(80);  // the parent died before the prctl
  if (!write_text(std::string(g_cgroup) + "/cgroup.procs", std::to_string(::getpid()))) ::_exit(81);
  const int fd = ::open(g_scratch, O_RDONLY | O_CLOEXEC);
  if (fd < 0) ::_exit(82);
  const int schedstat = ::open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
  static char buffer[kReadSize];
  for (;;) {
    Command cmd;
    if (!read_full(cmd_fd, &cmd, sizeof cmd) || cmd.max_ns == 0) ::_exit(0);
    Result r;
    const std::uint64_t wait0 = runqueue_wait_ns(schedstat);
    const std::uint64_t cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    const std::uint64_t t0 = now_ns();
    std::uint64_t t = t0;
    while (t - t0 < cmd.max_ns && r.bytes < cmd.max_bytes) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EINTR) continue;
        r.error = errno;
        break;
      }
      if (n == 0) {
        ::lseek(fd, 0, SEEK_SET);
        ++r.passes;
        continue;
      }
      r.bytes += static_cast<std::uint64_t>(n);
      t = now_ns();
    }
    r.wall_ns = now_ns() - t0;
    r.cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    r.wait_ns = runqueue_wait_ns(schedstat) - wait0;
    if (!write_full(res_fd, &r, sizeof r)) ::_exit(0);
  }
}

struct Workload {
  int cmd_fd = -1;
  int res_fd = -1;
  std::string error;

  bool start() {
    int cmd[2], res[2];
    if (::pipe2(cmd, O_CLOEXEC) != 0 || ::pipe2(res, O_CLOEXEC) != 0) {
      error = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    const pid_t parent = ::getpid();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      error = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid == 0) {
      ::close(cmd[1]);
      ::close(res[0]);
      child_main(parent, cmd[0], res[1]);
    }
    g_child = pid;
    ::close(cmd[0]);
    ::close(res[1]);
    cmd_fd = cmd[1];
    res_fd = res[0];
    return true;
  }

  // One round; false (with `error`) if the child failed or died.
  bool run(std::uint64_t max_ns, std::uint64_t max_bytes, Result& r) {
    const Command c{max_ns, max_bytes};
    if (!write_full(cmd_fd, &c, sizeof c)) return died("sending the command");
    pollfd p{res_fd, POLLIN, 0};
    const int timeout_ms = static_cast<int>(max_ns / 1000000) + 60000;
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready == 0) {
      error = "the workload child did not answer within " + std::to_string(timeout_ms / 1000) + " s";
      return false;
    }
    if (ready < 0 || !read_full(res_fd, &r, sizeof r)) return died("reading its result");
    if (r.error != 0) {
      error = std::string("the workload's read() failed: ") + std::strerror(r.error);
      return false;
    }
    return true;
  }

  bool died(const char* when) {
    int status = 0;
    const pid_t child = g_child;
    pid_t reaped = 0;  // the pipe closes a moment before the child can be reaped: wait up to 1 s
    for (int i = 0; child > 0 && i < 100 && (reaped = ::waitpid(child, &status, WNOHANG)) == 0; ++i) sleep_ms(10);
    if (child > 0 && reaped == child) {
      g_child = 0;
      char text[160];
      if (WIFEXITED(status)) {
        std::snprintf(text, sizeof text, "the workload child exited with status %d (%s)", WEXITSTATUS(status),
                      WEXITSTATUS(status) == 81 ? "could not join the cgroup" : WEXITSTATUS(status) == 82 ? "could not open the file" : "see the source");
      } else {
        std::snprintf(text, sizeof text, "the workload child was killed by signal %d%s", WTERMSIG(status),
                      WTERMSIG(status) == SIGKILL ? " (the memcg OOM killer?)" : "");
      }
      error = text;
    } else {
      error = std::string("the workload child stopped answering while ") + when;
    }
    return false;
  }

  void stop() {
    const Command quit{};
    if (cmd_fd >= 0) write_full(cmd_fd, &quit, sizeof quit);
    if (const pid_t child = g_child; child > 0) {
      for (int i = 0; i < 200 && ::waitpid(child, nullptr, WNOHANG) == 0; ++i) sleep_ms(10);
      ::kill(child, SIGKILL);  // no-op if it has exited and been reaped
      ::waitpid(child, nullptr, WNOHANG);
      g_child = 0;
    }
    if (cmd_fd >= 0) ::close(cmd_fd);
    if (res_fd >= 0) ::close(res_fd);
    cmd_fd = res_fd = -1;
  }
};

// --- Setup. ---

// false with `why`; `skip` when the kernel refused the very first mkdir (read-only cgroupfs).
bool create_cgroup(const Options& o, std::uint64_t& memcg_id, std::string& why, bool& skip) {
  // memcg_id: the directory's inode, what the probe keys its histograms by on v1.
  const bool ok = memdiag::test_support::create_memcg(g_cgroup, static_cast<std::uint64_t>(o.limit_mib) * kMiB,
                                                      g_cgroup_created, why, &memcg_id);
  if (!g_cgroup_created) {
    skip = errno == EROFS || errno == EACCES || errno == EPERM;
    return false;
  }
  g_created_any = true;
  return ok;
}

// Sparse (ftruncate) or written; either way with nothing of it in the page cache afterwards,
// so that every page the child reads is charged to the child's cgroup, not to ours.
bool create_scratch(const Options& o, std::string& why) {
  const int fd = ::open(g_scratch, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = std::string("creating ") + g_scratch + ": " + std::strerror(errno);
    return false;
  }
  g_scratch_created = 1;
  const off_t size = static_cast<off_t>(o.file_mib) * static_cast<off_t>(kMiB);
  bool ok = true;
  if (o.data_file) {
    std::vector<char> block(kMiB);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
    for (off_t at = 0; ok && at < size; at += static_cast<off_t>(kMiB)) ok = write_full(fd, block.data(), block.size());
    ok = ok && ::fdatasync(fd) == 0;
  } else {
    ok = ::ftruncate(fd, size) == 0;
  }
  if (ok) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  if (!ok) why = std::string("filling ") + g_scratch + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

// --- Rounds. ---

struct Round {
  bool with = false;
  double mb_s = 0;        // bytes per second of wall time, 1 MB = 10^6 bytes
  double cpu_mb_s = 0;    // bytes per second of the child's CPU time
  double wall_s = 0;
  double wait_share = 0;  // share of the round the child waited for a CPU
  double failcnt_per_s = 0;
  double events_per_s = 0;  // with: the cgroup's memcg reclaims the probe counted
  double mean_stall_us = 0;
  std::uint64_t events = 0;
};

struct Counted {
  std::uint64_t events = 0;     // memcg reclaims of our cgroup
  std::uint64_t sum_ns = 0;
  std::uint64_t elsewhere = 0;  // events of every other {kind, memcg}
  std::uint64_t drops = 0;
};

memdiag::Expected<Counted> count_events(memdiag::ReclaimStallProbe& probe, std::uint64_t memcg_id) {
  auto reading = probe.read();
  if (!reading) return reading.error();
  Counted c;
  for (const auto& h : reading->histograms) {
    if (h.kind == memdiag::StallKind::kMemcg && h.memcg_id == memcg_id) {
      c.events += h.count;
      c.sum_ns += h.sum_ns;
    } else {
      c.elsewhere += h.count;
    }
  }
  c.drops = reading->drops.total();
  return c;
}

struct Bench {
  Options o;
  std::uint64_t memcg_id = 0;
  Workload workload;
  std::string failcnt_path;
  std::string error;

  // Runs one round; `probe` (may be null) is already attached and is read after the round.
  bool round(memdiag::ReclaimStallProbe* probe, Round& out) {
    // Let deferred kernel work of the last open() or detach (RCU callbacks freeing programs,
    // maps, BTF) run before the clock starts, so it is not charged to the next round.
    sleep_ms(kSettleMs);
    const std::int64_t fail0 = read_u64(failcnt_path);
    Result r;
    if (!workload.run(static_cast<std::uint64_t>(o.round_seconds * 1e9), UINT64_MAX, r)) {
      error = workload.error;
      return false;
    }
    const std::int64_t fail1 = read_u64(failcnt_path);
    out.with = probe != nullptr;
    out.wall_s = static_cast<double>(r.wall_ns) / 1e9;
    out.mb_s = static_cast<double>(r.bytes) / 1e6 / out.wall_s;
    out.cpu_mb_s = r.cpu_ns > 0 ? static_cast<double>(r.bytes) / 1e6 / (static_cast<double>(r.cpu_ns) / 1e9) : 0;
    out.wait_share = static_cast<double>(r.wait_ns) / static_cast<double>(r.wall_ns);
    out.failcnt_per_s = fail0 >= 0 && fail1 >= 0 ? static_cast<double>(fail1 - fail0) / out.wall_s : -1;
    if (probe) {
      auto counted = count_events(*probe, memcg_id);
      if (!counted) {
        error = "reading the probe's maps: " + counted.error().message;
        return false;
      }
      out.events = counted->events;
      out.events_per_s = static_cast<double>(counted->events) / out.wall_s;
      out.mean_stall_us = counted->events ? static_cast<double>(counted->sum_ns) / 1e3 / static_cast<double>(counted->events) : 0;
      if (counted->drops > 0) info("  note: the probe dropped %llu events\n", static_cast<unsigned long long>(counted->drops));
    }
    return true;
  }

  void print_round(int index, const Round& r) {
    char extra[128] = "";
    if (r.with) {
      std::snprintf(extra, sizeof extra, "  probe: %7.0f memcg reclaims/s, mean stall %6.1f us", r.events_per_s, r.mean_stall_us);
    }
    info("  round %2d %-7s %8.1f MB/s wall %8.1f MB/s CPU  waited for a CPU %4.1f%%  failcnt %6.0f/s%s\n", index,
         r.with ? "with" : "without", r.mb_s, r.cpu_mb_s, 100 * r.wait_share, r.failcnt_per_s, extra);
  }
};

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += c;
    }
  }
  return out;
}

// Turns BPF run-time statistics on for as long as it lives: a BPF_ENABLE_STATS descriptor if
// the kernel has it (5.8+), else the sysctl, written back to its previous value.
class StatsOn {
 public:
  explicit StatsOn(bool sysctl_only) {
    std::string before;
    if (read_text(kStatsSysctl, before) && !before.empty()) before_ = before[0];
    if (!sysctl_only) fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (fd_ >= 0) {
      how_ = "BPF_ENABLE_STATS descriptor";
      return;
    }
    if (before_ == '1') {
      how_ = "already on";
      return;
    }
    g_sysctl_before = before_;
    g_sysctl_written = 1;  // before the write: a signal right after it must restore
    if (write_text(kStatsSysctl, "1")) {
      how_ = "sysctl";
    } else {
      g_sysctl_written = 0;
      how_ = std::string("could not be enabled (") + std::strerror(errno) + ")";
    }
  }
  ~StatsOn() {
    if (fd_ >= 0) ::close(fd_);
    if (g_sysctl_written && write_text(kStatsSysctl, std::string(1, g_sysctl_before))) g_sysctl_written = 0;
  }
  StatsOn(const StatsOn&) = delete;
  StatsOn& operator=(const StatsOn&) = delete;

  char before() const { return before_; }
  const std::string& how() const { return how_; }

 private:
  int fd_ = -1;
  char before_ = '?';
  std::string how_;
};

struct ProgramCost {
  std::string name;
  std::uint64_t runs = 0;
  double ns = 0;
};

int run(const Options& o) {
  if (::geteuid() != 0) {
    info("skipped: not root (memdiag-bpf-bench loads BPF programs and creates a cgroup under %s); nothing was measured\n",
         kV1Root);
    return 0;
  }
  if (::access((std::string(kV1Root) + "/memory.usage_in_bytes").c_str(), F_OK) != 0) {
    info("skipped: no cgroup v1 memory hierarchy at %s (a pure cgroup v2 host?); nothing was measured\n", kV1Root);
    return 0;
  }
  std::snprintf(g_cgroup, sizeof g_cgroup, "%s/%s%d", kV1Root, kPrefix, static_cast<int>(::getpid()));
  std::snprintf(g_scratch, sizeof g_scratch, "%s/%s%d.dat", kScratchDir, kPrefix, static_cast<int>(::getpid()));
  // SIGPIPE ignored: a dead child shows as EPIPE on the command pipe.
  memdiag::test_support::install_exit_cleanup(release_everything);
  remove_leftovers();

  // Load+attach time, before anything runs. The first failure means the probe cannot load here.
  std::vector<double> attach_ms;
  memdiag::AttachMode mode = memdiag::AttachMode::kTpBtf;
  for (int i = 0; i < o.opens; ++i) {
    const std::uint64_t t0 = now_ns();
    auto probe = memdiag::ReclaimStallProbe::open();
    const std::uint64_t t1 = now_ns();
    if (!probe) {
      if (i == 0) {
        info("skipped: the probe does not load here (%s); nothing was measured\n", probe.error().message.c_str());
        return 0;
      }
      std::fprintf(stderr, "open() failed on attempt %d: %s\n", i + 1, probe.error().message.c_str());
      return 1;
    }
    mode = (*probe)->mode();
    attach_ms.push_back(static_cast<double>(t1 - t0) / 1e6);
  }

  Bench b;
  b.o = o;
  std::string why;
  bool skip = false;
  if (!create_cgroup(o, b.memcg_id, why, skip)) {
    if (skip) {
      info("skipped: cannot create a memory cgroup (%s); nothing was measured\n", why.c_str());
      return 0;
    }
    std::fprintf(stderr, "creating the cgroup failed: %s\n", why.c_str());
    return 1;
  }
  b.failcnt_path = std::string(g_cgroup) + "/memory.failcnt";
  const std::uint64_t fill0 = now_ns();
  if (!create_scratch(o, why)) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  const double fill_s = static_cast<double>(now_ns() - fill0) / 1e9;
  if (!b.workload.start()) {
    std::fprintf(stderr, "%s\n", b.workload.error.c_str());
    return 1;
  }

  char workload[512];
  std::snprintf(workload, sizeof workload,
                "read() of a %d MiB %s file in %zu KiB reads, over and over, in memory cgroup %s "
                "(limit %d MiB, v1)",
                o.file_mib, o.data_file ? "written" : "sparse", kReadSize / 1024, g_cgroup, o.limit_mib);
  info("workload: %s\n", workload);
  info("probe: %s, %d CPUs online; scratch file ready in %.1f s\n", std::string(memdiag::to_string(mode)).c_str(),
       static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)), fill_s);

  // Warm-up: two passes over the file, so the cgroup is at its limit and reclaiming.
  {
    Result r;
    const std::uint64_t t0 = now_ns();
    if (!b.workload.run(120ull * 1000000000ull, 2ull * static_cast<std::uint64_t>(o.file_mib) * kMiB, r)) {
      std::fprintf(stderr, "warm-up: %s\n", b.workload.error.c_str());
      return 1;
    }
    info("warm-up: 2 passes in %.2f s; cgroup usage %.0f MiB, failcnt %lld\n", static_cast<double>(now_ns() - t0) / 1e9,
         static_cast<double>(read_u64(std::string(g_cgroup) + "/memory.usage_in_bytes")) / static_cast<double>(kMiB),
         static_cast<long long>(read_u64(b.failcnt_path)));
  }

  // without, with, without, with, ..., with, without: every "with" between two "without".
  info("rounds of %.2f s: %d with the probe, %d without, alternating\n", o.round_seconds, o.rounds, o.rounds + 1);
  std::vector<Round> rounds;
  for (int i = 0; i < 2 * o.rounds + 1; ++i) {
    const bool with = i % 2 == 1;
    std::unique_ptr<memdiag::ReclaimStallProbe> probe;
    if (with) {
      auto opened = memdiag::ReclaimStallProbe::open();
      if (!opened) {
        std::fprintf(stderr, "open() failed before round %d: %s\n", i + 1, opened.error().message.c_str());
        return 1;
      }
      probe = std::move(opened.value());
    }
    Round r;
    if (!b.round(probe.get(), r)) {
      std::fprintf(stderr, "round %d: %s\n", i + 1, b.error.c_str());
      return 1;
    }
    probe.reset();  // detached before the next round
    b.print_round(i + 1, r);
    rounds.push_back(r);
  }

  // The extra round with run-time statistics on.
  std::vector<ProgramCost> costs;
  std::vector<std::string> idle_programs;
  Round stats_round;
  std::string stats_how;
  char stats_before = '?';
  double bpf_share = -1, ns_per_reclaim = -1;
  {
    auto opened = memdiag::ReclaimStallProbe::open();
    if (!opened) {
      std::fprintf(stderr, "open() failed before the statistics round: %s\n", opened.error().message.c_str());
      return 1;
    }
    auto& probe = *opened.value();
    std::vector<memdiag::BpfProgramStats> stats;
    {
      StatsOn on(o.stats_sysctl);
      stats_how = on.how();
      stats_before = on.before();
      if (!b.round(&probe, stats_round)) {
        std::fprintf(stderr, "statistics round: %s\n", b.error.c_str());
        return 1;
      }
      auto got = probe.program_stats();
      if (!got) {
        std::fprintf(stderr, "program_stats(): %s\n", got.error().message.c_str());
        return 1;
      }
      stats = std::move(got.value());
    }
    std::uint64_t total_ns = 0, memcg_ns = 0;
    for (const auto& s : stats) {
      if (s.run_count == 0) {
        idle_programs.push_back(s.name);
        continue;
      }
      costs.push_back({s.name, s.run_count, static_cast<double>(s.run_time_ns) / static_cast<double>(s.run_count)});
      total_ns += s.run_time_ns;
      if (s.name.find("memcg_") != std::string::npos) memcg_ns += s.run_time_ns;
    }
    if (stats_round.wall_s > 0) bpf_share = static_cast<double>(total_ns) / 1e9 / stats_round.wall_s;
    if (stats_round.events > 0) ns_per_reclaim = static_cast<double>(memcg_ns) / static_cast<double>(stats_round.events);
    b.print_round(2 * o.rounds + 2, stats_round);
    info("  (round %d: BPF run-time statistics on, not in the medians)\n", 2 * o.rounds + 2);
  }
  b.workload.stop();

  // --- Figures. ---
  std::vector<double> without, with, cpu_without, cpu_with, pair, events, failcnt, waited;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const Round& r = rounds[i];
    waited.push_back(100 * r.wait_share);
    (r.with ? with : without).push_back(r.mb_s);
    (r.with ? cpu_with : cpu_without).push_back(r.cpu_mb_s);
    failcnt.push_back(r.failcnt_per_s);
    if (r.with) {
      events.push_back(r.events_per_s);
      pair.push_back(r.mb_s / ((rounds[i - 1].mb_s + rounds[i + 1].mb_s) / 2));
    }
  }
  const double med_without = median(without), med_with = median(with);
  const double ratio = med_without > 0 ? med_with / med_without : 0;
  const double cpu_ratio = median(cpu_without) > 0 ? median(cpu_with) / median(cpu_without) : 0;
  const double pair_median = median(pair);
  const double pair_mean = mean_of(pair), pair_ci = ci95_half_width(pair);
  const double events_per_s = median(events);
  const double failcnt_per_s = median(failcnt);
  const bool reclaimed = min_of(failcnt) > 0 && min_of(events) > 0;
  const bool met = ratio >= kTarget;

  auto line = [](const char* what, const std::string& value, const std::string& note) {
    info("  %-44s %14s  %s\n", what, value.c_str(), note.c_str());
  };
  auto fmt = [](const char* format, double v) {
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::string(text);
  };
  info("\nsummary (%d with/without pairs of %.2f s rounds; MB = 10^6 bytes; throughput = bytes read per second):\n",
       o.rounds, o.round_seconds);
  line("throughput without probes, median", fmt("%.1f MB/s", med_without),
       "range " + fmt("%.1f", min_of(without)) + " .. " + fmt("%.1f", max_of(without)) + ", CV " +
           fmt("%.1f%%", cv_percent(without)));
  line("throughput with probes, median", fmt("%.1f MB/s", med_with),
       "range " + fmt("%.1f", min_of(with)) + " .. " + fmt("%.1f", max_of(with)) + ", CV " + fmt("%.1f%%", cv_percent(with)));
  line("throughput ratio with/without probes", fmt("%.3f", ratio),
       std::string("target >= 0.99: ") + (met ? "met" : "MISSED"));
  line("per-pair ratio, median", fmt("%.3f", pair_median),
       "range " + fmt("%.3f", min_of(pair)) + " .. " + fmt("%.3f", max_of(pair)) +
           " (each with-round / mean of the without-rounds around it)");
  line("per-pair ratio, mean and 95% confidence", fmt("%.3f", pair_mean),
       "+- " + fmt("%.3f", pair_ci) + ": " + fmt("%.3f", pair_mean - pair_ci) + " .. " + fmt("%.3f", pair_mean + pair_ci) +
           (pair.size() < 2                     ? std::string(" (too few pairs)")
            : pair_mean - pair_ci >= kTarget   ? std::string(" (above 0.99: the target is met beyond the noise)")
            : pair_mean + pair_ci < kTarget    ? std::string(" (below 0.99: the target is missed beyond the noise)")
                                               : std::string(" (includes 0.99: the noise is too large to decide)")));
  line("CPU throughput ratio with/without", fmt("%.3f", cpu_ratio),
       "(bytes per CPU second of the workload: " + fmt("%.1f", median(cpu_without)) + " / " + fmt("%.1f", median(cpu_with)) +
           " MB/s without/with)");
  line("other load: workload waited for a CPU", fmt("%.1f%%", median(waited)),
       "of each round (median; range " + fmt("%.1f", min_of(waited)) + " .. " + fmt("%.1f%%", max_of(waited)) +
           "; 0 on an idle machine)");
  line("memcg reclaim events/s (probe, median)", fmt("%.0f", events_per_s),
       std::string(reclaimed ? "verified" : "NOT VERIFIED: the workload did not reclaim in every round") +
           ": memory.failcnt +" + fmt("%.0f", failcnt_per_s) + "/s (median of all rounds), mean stall " +
           fmt("%.1f us", median([&] {
             std::vector<double> v;
             for (const auto& r : rounds)
               if (r.with) v.push_back(r.mean_stall_us);
             return v;
           }())));
  line("load+attach, open()", fmt("%.1f ms", median(attach_ms)),
       "median of " + std::to_string(attach_ms.size()) + ", range " + fmt("%.1f", min_of(attach_ms)) + " .. " +
           fmt("%.1f ms", max_of(attach_ms)) + " (" + std::string(memdiag::to_string(mode)) + ")");
  info("  per-event cost, from one more 'with' round with BPF statistics on (%s):\n", stats_how.c_str());
  for (const auto& c : costs) {
    const std::string what = "    " + c.name;
    line(what.c_str(), fmt("%.0f ns", c.ns), std::to_string(c.runs) + " runs");
  }
  if (ns_per_reclaim >= 0) {
    line("  BPF time per memcg reclaim (begin + end)", fmt("%.0f ns", ns_per_reclaim),
         std::to_string(stats_round.events) + " reclaims counted");
  }
  if (bpf_share >= 0) {
    line("  BPF time / workload wall time", fmt("%.3f%%", 100 * bpf_share),
         "(all programs, all tasks, in that round)");
    line("  ratio expected from the BPF time", fmt("%.4f", 1 - bpf_share),
         "(1 - the share above: if running the programs were the probe's only cost)");
  }
  if (!idle_programs.empty()) {
    std::string names;
    for (const auto& n : idle_programs) names += (names.empty() ? "" : ", ") + n;
    info("    did not run: %s\n", names.c_str());
  }

  if (o.json) {
    std::string j = "{";
    auto field = [&j](const char* name, const std::string& value) {
      if (j.size() > 1) j += ",";
      j += "\"" + std::string(name) + "\":" + value;
    };
    auto num = [](double v, int digits) {
      char text[64];
      std::snprintf(text, sizeof text, "%.*f", digits, v);
      return std::string(text);
    };
    field("workload", "\"" + json_escape(workload) + "\"");
    field("mode", "\"" + std::string(memdiag::to_string(mode)) + "\"");
    field("rounds", std::to_string(o.rounds));
    field("round_seconds", num(o.round_seconds, 3));
    field("median_mb_s_without", num(med_without, 1));
    field("median_mb_s_with", num(med_with, 1));
    field("ratio", num(ratio, 4));
    field("target", num(kTarget, 2));
    field("target_met", met ? "true" : "false");
    field("pair_ratio_median", num(pair_median, 4));
    field("pair_ratio_min", num(min_of(pair), 4));
    field("pair_ratio_max", num(max_of(pair), 4));
    field("pair_ratio_mean", num(pair_mean, 4));
    field("pair_ratio_ci95", num(pair_ci, 4));
    field("cv_percent_without", num(cv_percent(without), 2));
    field("cv_percent_with", num(cv_percent(with), 2));
    field("cpu_wait_percent_median", num(median(waited), 1));
    field("median_cpu_mb_s_without", num(median(cpu_without), 1));
    field("median_cpu_mb_s_with", num(median(cpu_with), 1));
    field("cpu_ratio", num(cpu_ratio, 4));
    field("reclaim_events_per_s", num(events_per_s, 0));
    field("failcnt_per_s", num(failcnt_per_s, 0));
    field("reclaim_verified", reclaimed ? "true" : "false");
    field("attach_ms_median", num(median(attach_ms), 2));
    field("attach_ms_min", num(min_of(attach_ms), 2));
    field("attach_ms_max", num(max_of(attach_ms), 2));
    std::string per = "{", runs = "{";
    for (const auto& c : costs) {
      per += (per.size() > 1 ? ",\"" : "\"") + json_escape(c.name) + "\":" + num(c.ns, 1);
      runs += (runs.size() > 1 ? ",\"" : "\"") + json_escape(c.name) + "\":" + std::to_string(c.runs);
    }
    field("per_program_ns", per + "}");
    field("per_program_runs", runs + "}");
    field("bpf_ns_per_reclaim", num(ns_per_reclaim, 1));
    field("bpf_time_share", num(bpf_share, 6));
    field("ratio_expected_from_bpf_time", num(bpf_share >= 0 ? 1 - bpf_share : -1, 4));
    field("stats_enabled_via", "\"" + json_escape(stats_how) + "\"");
    j += "}";
    std::printf("%s\n", j.c_str());
    std::fflush(stdout);
  }

  std::string sysctl_after;
  read_text(kStatsSysctl, sysctl_after);
  info("kernel.bpf_stats_enabled: %c before the statistics round, %c now\n", stats_before,
       sysctl_after.empty() ? '?' : sysctl_after[0]);
  return reclaimed ? 0 : 1;
}

// The normal end: everything removed, then checked.
bool cleanup_and_report() {
  release_everything();
  memdiag::test_support::exit_cleanup_done();
  if (!g_created_any) return true;  // skipped (or failed) before anything was created
  int left = 0;
  std::string what;
  if (::access(g_cgroup, F_OK) == 0) {
    ++left;
    what += std::string(" ") + g_cgroup;
  }
  if (::access(g_scratch, F_OK) == 0) {
    ++left;
    what += std::string(" ") + g_scratch;
  }
  if (g_sysctl_written) {
    ++left;
    what += " kernel.bpf_stats_enabled=1";
  }
  info("cleanup: removed cgroup %s, scratch file %s, workload child; statistics off: %d left%s\n", g_cgroup, g_scratch,
       left, what.c_str());
  return left == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (o.json) g_info = stderr;
  const int status = run(o);
  const bool clean = cleanup_and_report();
  return status != 0 ? status : clean ? 0 : 1;
}
