// SPDX-License-Identifier: Apache-2.0
// The eBPF reclaim-stall probe: names, then the real thing as root: load into this kernel, make
// a memory cgroup reclaim and OOM, and find exactly that cgroup in the maps; with one kind made
// unavailable, that kind is reported and the others still count. (The log2 layout the
// histograms share is tested in tests/unit/core/log2_layout_test.cpp.)
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/bpf/bpf_factories.hpp"
#include "probes/bpf/reclaim_stall_probe.hpp"
#include "probes/bpf/reclaim_stall_source.hpp"
#include "probes/core/snapshot_store.hpp"
#include "tests/support/scratch_memcg.hpp"
#include "tests/support/write_text.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;

// ---- Pure: names ----

TEST(ReclaimStallProbe, NamesKindsAndModes) {
  EXPECT_EQ(to_string(StallKind::kMemcg), "memcg");
  EXPECT_EQ(to_string(StallKind::kThrottled), "throttled");
  EXPECT_EQ(to_string(AttachMode::kTpBtf), "tp_btf");
  EXPECT_EQ(to_string(AttachMode::kTracepoint), "tracepoint");
}

// ---- Degradation: how the daemon's test forces BPF off ----

TEST(ReclaimStallProbe, MissingBtfPathIsAnErrorNamingIt) {
  ProbeOptions options;
  options.btf_path = "/nonexistent/vmlinux";
  auto probe = ReclaimStallProbe::open(options);
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.error().message.find("no BTF at /nonexistent/vmlinux"), std::string::npos)
      << probe.error().message;
}

// ---- Real: as root on a kernel with BTF and a memory cgroup hierarchy ----

using test_support::write_text;

constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::size_t kLimit = 64 * kMiB;
constexpr std::size_t kWorkload = 192 * kMiB;  // three times the limit

// A memory cgroup made for one test, with a 64 MiB limit; the destructor kills whatever is
// left in it and removes it, also when an assertion failed half-way.
class ScratchMemcg {
 public:
  static std::string root() {
    const std::string v1 = test_support::kV1MemoryRoot;
    if (std::filesystem::exists(v1 + "/memory.limit_in_bytes")) return v1;
    return {};  // the hybrid/v1 layout this project's machines have; v2-only hosts skip
  }

  explicit ScratchMemcg(const std::string& name) : path_(root() + "/" + name) {
    test_support::create_memcg(path_.c_str(), kLimit, created_, error_, &inode_);
  }

  ~ScratchMemcg() {
    if (!created_) return;
    // Kills what is left, retries while exiting tasks leave the cgroup: up to 50 x 100 ms.
    if (test_support::remove_memcg(path_.c_str(), 50, 100)) return;
    std::fprintf(stderr, "warning: could not remove %s: %s\n", path_.c_str(), std::strerror(errno));
  }

  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  std::uint64_t inode() const { return inode_; }

 private:
  std::string path_;
  std::string error_;
  bool created_ = false;
  std::uint64_t inode_ = 0;
};

// A forked child: killed and reaped by the destructor unless waited for.
class Child {
 public:
  template <class Body>
  explicit Child(const std::string& cgroup, Body body) {
    pid_ = ::fork();
    if (pid_ == 0) {
      // In the child: only plain syscalls from here, then _exit (no gtest teardown).
      if (!write_text(cgroup + "/cgroup.procs", std::to_string(::getpid()))) ::_exit(90);
      ::_exit(body());
    }
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Waits up to `timeout`; returns the waitpid status, or -1 on timeout (the child is killed).
  int wait(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

// Writes 192 MiB through the page cache and reads it back: far over the 64 MiB limit, so the
// cgroup must reclaim its own page cache (clean after each fdatasync) again and again.
int file_workload(const std::string& path) {
  static char block[kMiB];
  std::memset(block, 'x', sizeof(block));
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return 91;
  for (std::size_t written = 0; written < kWorkload; written += sizeof(block)) {
    if (::write(fd, block, sizeof(block)) != static_cast<ssize_t>(sizeof(block))) return 92;
    if ((written / kMiB) % 16 == 15 && ::fdatasync(fd) != 0) return 93;
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) return 94;
  while (::read(fd, block, sizeof(block)) > 0) {
  }
  ::close(fd);
  return 0;
}

// Touches 192 MiB of anonymous memory: with no swap nothing can be reclaimed, so the memcg
// OOM killer kills this process.
int anon_workload() {
  void* p = ::mmap(nullptr, kWorkload, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 95;
  auto* bytes = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < kWorkload; i += 4096) bytes[i] = 1;
  return 0;  // not expected: the kill comes first
}

// Deletes a file when the test ends, passed or not.
struct FileGuard {
  std::string path;
  ~FileGuard() { ::unlink(path.c_str()); }
};

const StallHistogram* find_histogram(const ReclaimStallReading& r, StallKind kind, std::uint64_t memcg_id) {
  for (const auto& h : r.histograms) {
    if (h.kind == kind && h.memcg_id == memcg_id) return &h;
  }
  return nullptr;
}

std::uint64_t victims_of(const ReclaimStallReading& r, std::uint64_t memcg_id) {
  for (const auto& v : r.oom_victims) {
    if (v.memcg_id == memcg_id) return v.count;
  }
  return 0;
}

void print_program_stats(ReclaimStallProbe& probe) {
  auto stats = probe.program_stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  for (const auto& s : *stats) {
    if (s.run_count == 0) continue;  // zero unless kernel.bpf_stats_enabled=1
    std::printf("  %-22s runs %8llu  total %10llu ns  %6.0f ns/event\n", s.name.c_str(),
                static_cast<unsigned long long>(s.run_count), static_cast<unsigned long long>(s.run_time_ns),
                static_cast<double>(s.run_time_ns) / static_cast<double>(s.run_count));
  }
}

void print_histogram(const StallHistogram& h) {
  std::printf("  %s memcg %llu: count %llu, sum %.3f ms, mean %.1f us\n", std::string(to_string(h.kind)).c_str(),
              static_cast<unsigned long long>(h.memcg_id), static_cast<unsigned long long>(h.count),
              static_cast<double>(h.sum_ns) / 1e6,
              h.count ? static_cast<double>(h.sum_ns) / static_cast<double>(h.count) / 1e3 : 0.0);
}

class ReclaimStallLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_BPF, CAP_PERFMON, cgroup creation)";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "kernel has no BTF (/sys/kernel/btf/vmlinux)";
    if (ScratchMemcg::root().empty()) GTEST_SKIP() << "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory";
  }

  static std::string unique_name(const char* what) {
    return std::string("memdiag-bpftest-") + what + "-" + std::to_string(::getpid());
  }
};

// Opened five times in a row (each probe closed before the next): every open attaches in
// tp_btf mode. What an open costs is measured by memdiag-bpf-bench (load+attach time).
TEST_F(ReclaimStallLive, OpensRepeatedlyInTpBtfMode) {
  AttachMode mode = AttachMode::kTracepoint;
  for (int i = 0; i < 5; ++i) {
    auto probe = ReclaimStallProbe::open();
    ASSERT_TRUE(probe.ok()) << probe.error().message;
    mode = (*probe)->mode();
    EXPECT_EQ(mode, AttachMode::kTpBtf) << "open " << i;
  }
  EXPECT_EQ(mode, AttachMode::kTpBtf);  // this kernel has BTF: no fallback needed
}

// libbpf's parse of the kernel's BTF (~2x the file's size for a moment) happens in the loader's
// child: this process's peak does not move while the probe opens, and the child's peak holds at
// least one copy of the BTF beyond what it shared with this process when it was forked.
TEST_F(ReclaimStallLive, LoadingParsesTheKernelsBtfInTheChildNotHere) {
  auto read_status_kib = [](const char* field) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    long value = -1;
    char line[256];
    while (f != nullptr && std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::strncmp(line, field, std::strlen(field)) == 0) value = std::strtol(line + std::strlen(field), nullptr, 10);
    }
    if (f != nullptr) std::fclose(f);
    return value;
  };
  ASSERT_TRUE(write_text("/proc/self/clear_refs", "5"));  // VmHWM := VmRSS from here
  const long rss_before = read_status_kib("VmRSS:");
  const long peak_before = read_status_kib("VmHWM:");
  auto probe = ReclaimStallProbe::open();
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  const long peak_after = read_status_kib("VmHWM:");
  const long btf_kib = static_cast<long>(std::filesystem::file_size("/sys/kernel/btf/vmlinux") / 1024);
  std::printf("parent peak +%ld KiB; loader child peak %ld KiB (parent RSS at fork %ld KiB, BTF %ld KiB), %lld us\n",
              peak_after - peak_before, (*probe)->loader_peak_rss_kib(), rss_before, btf_kib,
              static_cast<long long>((*probe)->load_time().count()));
  EXPECT_LT(peak_after - peak_before, btf_kib / 2) << "the BTF was parsed in this process";
  EXPECT_GT((*probe)->loader_peak_rss_kib(), rss_before + btf_kib) << "the child did not hold the BTF";
}

// The daemon holds the only references once the child has exited: closing the probe unloads
// every program (the kernel frees them shortly after the last reference goes).
TEST_F(ReclaimStallLive, ClosingTheProbeUnloadsItsPrograms) {
  auto probe = ReclaimStallProbe::open();
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  auto stats = (*probe)->program_stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_FALSE(stats->empty());
  std::vector<std::uint32_t> ids;
  for (const BpfProgramStats& p : *stats) {
    ASSERT_NE(p.id, 0u) << p.name;
    ids.push_back(p.id);
  }
  auto loaded = [](std::uint32_t id) {
    const int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  };
  for (std::uint32_t id : ids) EXPECT_TRUE(loaded(id)) << "program " << id << " not loaded while the probe lives";
  probe = make_error("closed");  // the probe goes
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::size_t still = ids.size();
  while (still != 0 && std::chrono::steady_clock::now() < deadline) {
    still = static_cast<std::size_t>(std::count_if(ids.begin(), ids.end(), loaded));
    if (still != 0) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(still, 0u) << "programs still loaded 10 s after the probe closed";
}

// The daemon loads through its own --bpf-loader mode (a fresh process, not a fork that goes on
// running): the options cross as arguments, the descriptors come back the same way.
class ExecdLoader {
 public:
  explicit ExecdLoader(const char* program) { set_bpf_loader_program(program); }
  ~ExecdLoader() { set_bpf_loader_program(""); }  // the other tests fork
};

TEST_F(ReclaimStallLive, TheDaemonsLoaderModeAttachesWithTheOptionsGiven) {
  ExecdLoader execd(MEMDIAG_DAEMON_PATH);
  ProbeOptions options;
  options.unavailable_for_test = {StallKind::kThrottled};
  auto probe = ReclaimStallProbe::open(options);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  EXPECT_EQ((*probe)->mode(), AttachMode::kTpBtf);
  EXPECT_FALSE((*probe)->kind(StallKind::kThrottled).attached) << "the option did not cross exec";
  EXPECT_TRUE((*probe)->kind(StallKind::kDirect).attached);
  EXPECT_NE((*probe)->not_attached().find("throttled"), std::string::npos) << (*probe)->not_attached();
  auto stats = (*probe)->program_stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_FALSE(stats->empty());
  auto reading = (*probe)->read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
}

TEST_F(ReclaimStallLive, ALoaderProgramThatCannotRunIsAnErrorSayingSo) {
  ExecdLoader execd("/nonexistent/memdiagd");
  auto probe = ReclaimStallProbe::open();
  ASSERT_FALSE(probe.ok());
  EXPECT_NE(probe.error().message.find("exited with code 127 before answering"), std::string::npos)
      << probe.error().message;
}

TEST_F(ReclaimStallLive, TpBtfWithoutFallbackOpens) {
  ProbeOptions options;
  options.allow_tracefs_fallback = false;
  auto probe = ReclaimStallProbe::open(options);
  ASSERT_TRUE(probe.ok()) << probe.error().message;
  EXPECT_EQ((*probe)->mode(), AttachMode::kTpBtf);
  auto reading = (*probe)->read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  EXPECT_EQ(reading->drops.total(), 0u);
}

TEST_F(ReclaimStallLive, MemcgReclaimIsAttributedToTheCgroup) {
  auto opened = ReclaimStallProbe::open();
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ReclaimStallProbe& probe = **opened;

  ScratchMemcg cg(unique_name("reclaim"));
  ASSERT_TRUE(cg.error().empty()) << cg.error();
  FileGuard file{"/var/tmp/" + unique_name("reclaim") + ".dat"};
  // A read before the workload leaves a cached result behind: the read after it must notice
  // the kernel's generation moved and walk the maps again.
  auto before = probe.read();
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(find_histogram(*before, StallKind::kMemcg, cg.inode()), nullptr);

  Child child(cg.path(), [&] { return file_workload(file.path); });
  ASSERT_TRUE(child.started());
  const int status = child.wait(120s);
  ASSERT_NE(status, -1) << "workload did not finish within 120 s";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "workload failed, status " << status;

  auto reading = probe.read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  const StallHistogram* h = find_histogram(*reading, StallKind::kMemcg, cg.inode());
  ASSERT_NE(h, nullptr) << "no memcg histogram for " << cg.path() << " (inode " << cg.inode() << ")";
  print_histogram(*h);
  print_program_stats(probe);
  EXPECT_GT(h->count, 0u);
  EXPECT_GT(h->sum_ns, 0u);
  EXPECT_EQ(std::accumulate(h->buckets.begin(), h->buckets.end(), std::uint64_t{0}), h->count);
  EXPECT_EQ(reading->drops.total(), 0u);

  // forget() drops the id's keys; counting elsewhere goes on.
  ASSERT_TRUE(probe.forget(cg.inode()).all());
  auto after = probe.read();
  ASSERT_TRUE(after.ok()) << after.error().message;
  for (std::size_t k = 0; k < kStallKindCount; ++k) {
    EXPECT_EQ(find_histogram(*after, static_cast<StallKind>(k), cg.inode()), nullptr);
  }
}

// Compaction on request (vm.compact_memory) runs in the writing task: a compaction stall of
// that task's cgroup. Cheap here (~0.2 s of CPU, no memory pressure), unlike direct reclaim,
// which would need the whole node short of memory.
TEST_F(ReclaimStallLive, CompactionIsAttributedToTheRequestingCgroup) {
  if (!std::filesystem::exists("/proc/sys/vm/compact_memory")) GTEST_SKIP() << "kernel without compaction";
  auto opened = ReclaimStallProbe::open();
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ScratchMemcg cg(unique_name("compact"));
  ASSERT_TRUE(cg.error().empty()) << cg.error();

  Child child(cg.path(), [] { return write_text("/proc/sys/vm/compact_memory", "1") ? 0 : 96; });
  ASSERT_TRUE(child.started());
  const int status = child.wait(60s);
  ASSERT_NE(status, -1) << "compaction did not finish within 60 s";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;

  auto reading = (*opened)->read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  const StallHistogram* h = find_histogram(*reading, StallKind::kCompaction, cg.inode());
  ASSERT_NE(h, nullptr) << "no compaction histogram for inode " << cg.inode();
  print_histogram(*h);
  EXPECT_GT(h->count, 0u);  // one per zone compacted
  EXPECT_EQ(std::accumulate(h->buckets.begin(), h->buckets.end(), std::uint64_t{0}), h->count);
}

// The OOM check, run in both attach modes: tp_btf gets the victim task as an argument (since
// 6.8), the classic tracepoint only its pid, so the record takes the comm of the task running
// the OOM killer when that task is the victim, as here (a process killed for its own
// allocation).
void expect_oom_victim_counted(ReclaimStallProbe& probe, const std::string& cgroup_name) {
  ScratchMemcg cg(cgroup_name);
  ASSERT_TRUE(cg.error().empty()) << cg.error();

  Child child(cg.path(), anon_workload);
  ASSERT_TRUE(child.started());
  const pid_t victim = child.pid();
  const int status = child.wait(60s);
  ASSERT_NE(status, -1) << "child was not OOM-killed within 60 s";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "expected an OOM kill, status " << status;

  auto reading = probe.read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  EXPECT_GE(victims_of(*reading, cg.inode()), 1u) << "no OOM victim counted for inode " << cg.inode();
  EXPECT_EQ(reading->drops.victim_unknown, 0u);
  const auto named = std::find_if(reading->recent_victims.begin(), reading->recent_victims.end(),
                                  [&](const RecentOomVictim& v) { return v.pid == victim; });
  ASSERT_NE(named, reading->recent_victims.end()) << "the victim's pid " << victim << " is not in the ring";
  EXPECT_EQ(named->memcg_id, cg.inode());
  EXPECT_FALSE(named->comm.empty()) << "the victim ran the OOM killer itself: its comm is known";
  // Before killing, the kernel tried to reclaim the cgroup.
  const StallHistogram* h = find_histogram(*reading, StallKind::kMemcg, cg.inode());
  ASSERT_NE(h, nullptr);
  print_histogram(*h);
  print_program_stats(probe);
  EXPECT_GT(h->count, 0u);
}

TEST_F(ReclaimStallLive, OomVictimIsCountedForItsCgroup) {
  auto opened = ReclaimStallProbe::open();
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  expect_oom_victim_counted(**opened, unique_name("oom"));
}

// Classic tracepoints need tracefs, which is not always mounted (it is not on the CI machines):
// mount it for the test and unmount it afterwards, so the fallback is really exercised.
class TracefsMount {
 public:
  TracefsMount() {
    if (std::filesystem::exists("/sys/kernel/tracing/events") ||
        std::filesystem::exists("/sys/kernel/debug/tracing/events")) {
      available_ = true;
      return;
    }
    if (::mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0) {
      available_ = mounted_ = true;
    } else {
      error_ = std::strerror(errno);
    }
  }
  ~TracefsMount() {
    if (mounted_) ::umount("/sys/kernel/tracing");
  }
  bool available() const { return available_; }
  const std::string& error() const { return error_; }

 private:
  bool available_ = false;
  bool mounted_ = false;
  std::string error_;
};

TEST_F(ReclaimStallLive, ClassicTracepointFallbackCountsToo) {
  TracefsMount tracefs;
  if (!tracefs.available()) GTEST_SKIP() << "tracefs not mounted and mounting it failed: " << tracefs.error();
  ProbeOptions options;
  options.force_tracepoint = true;
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_EQ((*opened)->mode(), AttachMode::kTracepoint);
  expect_oom_victim_counted(**opened, unique_name("oom-tp"));
}

// ---- One unit at a time: a kernel without one kind's tracepoints traces the others ----

// Makes the cgroup reclaim (the file workload) and waits for it to end.
void run_file_workload(const ScratchMemcg& cg, const std::string& file) {
  Child child(cg.path(), [&] { return file_workload(file); });
  ASSERT_TRUE(child.started());
  const int status = child.wait(120s);
  ASSERT_NE(status, -1) << "workload did not finish within 120 s";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "workload failed, status " << status;
}

constexpr std::string_view kThrottledMissingFromBtf =
    "tp_btf: tracepoint mm_vmscan_throttled missing from kernel BTF (tp_btf cannot attach to it)";

// Throttled made unavailable in both modes (the kernel's BTF is asked for its tracepoint under a
// name it has not, as on a kernel before 5.16, and so is tracefs):
// it is reported with its reason, its programs are not in the kernel, and memcg reclaim is
// still counted for the cgroup.
TEST_F(ReclaimStallLive, AKindThatCannotAttachIsReportedAndTheOthersCount) {
  TracefsMount tracefs;  // so the missing kind's fallback is tried, as on a node with tracefs
  ProbeOptions options;
  options.unavailable_for_test = {StallKind::kThrottled};
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ReclaimStallProbe& probe = **opened;

  const UnitAttachment& throttled = probe.kind(StallKind::kThrottled);
  EXPECT_FALSE(throttled.attached);
  EXPECT_TRUE(throttled.reason.starts_with(kThrottledMissingFromBtf)) << throttled.reason;
  if (tracefs.available()) {
    EXPECT_NE(throttled.reason.find("; tracepoint: tracepoint vmscan:mm_vmscan_throttled"), std::string::npos)
        << throttled.reason;
  }
  EXPECT_EQ(probe.not_attached(), "throttled (" + throttled.reason + ")");
  for (StallKind kind : {StallKind::kDirect, StallKind::kMemcg, StallKind::kSoftLimit, StallKind::kCompaction}) {
    EXPECT_TRUE(probe.kind(kind).attached) << to_string(kind) << ": " << probe.kind(kind).reason;
    EXPECT_EQ(probe.kind(kind).mode, AttachMode::kTpBtf) << to_string(kind);
  }
  EXPECT_TRUE(probe.oom_victims().attached) << probe.oom_victims().reason;
  EXPECT_EQ(probe.mode(), AttachMode::kTpBtf);
  // In the kernel: begin and end of the four other kinds, and the OOM victim program.
  auto stats = probe.program_stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->size(), 9u);
  for (const auto& program : *stats) EXPECT_EQ(program.name.find("throttled"), std::string::npos) << program.name;

  ScratchMemcg cg(unique_name("one-missing"));
  ASSERT_TRUE(cg.error().empty()) << cg.error();
  FileGuard file{"/var/tmp/" + unique_name("one-missing") + ".dat"};
  run_file_workload(cg, file.path);
  if (HasFatalFailure()) return;

  auto reading = probe.read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  const StallHistogram* h = find_histogram(*reading, StallKind::kMemcg, cg.inode());
  ASSERT_NE(h, nullptr) << "no memcg histogram for " << cg.path() << " with throttled unavailable";
  print_histogram(*h);
  EXPECT_GT(h->count, 0u);
  for (const auto& histogram : reading->histograms) EXPECT_NE(histogram.kind, StallKind::kThrottled);
}

// Two kinds missing: both found by asking the kernel's BTF before anything is loaded, both
// reported, the rest attached.
TEST_F(ReclaimStallLive, TwoMissingKindsAreBothReported) {
  ProbeOptions options;
  options.unavailable_for_test = {StallKind::kDirect, StallKind::kThrottled};
  options.allow_tracefs_fallback = false;
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ReclaimStallProbe& probe = **opened;
  EXPECT_EQ(probe.kind(StallKind::kDirect).reason,
            "tp_btf: tracepoint mm_vmscan_direct_reclaim_begin missing from kernel BTF (tp_btf cannot attach to it) "
            "(tracefs fallback disabled)");
  EXPECT_EQ(probe.not_attached(), "direct (" + probe.kind(StallKind::kDirect).reason + "), throttled (" +
                                      std::string(kThrottledMissingFromBtf) + " (tracefs fallback disabled))");
  for (StallKind kind : {StallKind::kMemcg, StallKind::kSoftLimit, StallKind::kCompaction}) {
    EXPECT_TRUE(probe.kind(kind).attached) << to_string(kind) << ": " << probe.kind(kind).reason;
  }
  EXPECT_TRUE(probe.oom_victims().attached);
  auto stats = probe.program_stats();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->size(), 7u);
}

// A kind that passes the BTF probe yet fails libbpf's load (as a program some kernel's verifier
// refuses would): the failed load is bisected to that kind, which is reported with libbpf's
// reason, and every other kind attaches in the next round.
TEST_F(ReclaimStallLive, AKindWhoseLoadFailsIsFoundAndTheOthersAttach) {
  ProbeOptions options;
  options.tp_btf_load_fails_for_test = {StallKind::kCompaction};
  options.allow_tracefs_fallback = false;
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ReclaimStallProbe& probe = **opened;
  const UnitAttachment& compaction = probe.kind(StallKind::kCompaction);
  EXPECT_FALSE(compaction.attached);
  EXPECT_TRUE(compaction.reason.starts_with("tp_btf: ")) << compaction.reason;
  EXPECT_NE(compaction.reason.find("mm_compaction_begin"), std::string::npos) << compaction.reason;
  for (StallKind kind : {StallKind::kDirect, StallKind::kMemcg, StallKind::kSoftLimit, StallKind::kThrottled}) {
    EXPECT_TRUE(probe.kind(kind).attached) << to_string(kind) << ": " << probe.kind(kind).reason;
    EXPECT_EQ(probe.kind(kind).mode, AttachMode::kTpBtf) << to_string(kind);
  }
  EXPECT_TRUE(probe.oom_victims().attached) << probe.oom_victims().reason;
}

// Every kind missing: the OOM victim program is a unit of its own and still attaches.
TEST_F(ReclaimStallLive, WithEveryKindMissingOomVictimsAreStillTraced) {
  ProbeOptions options;
  for (std::size_t k = 0; k < kStallKindCount; ++k) options.unavailable_for_test.push_back(static_cast<StallKind>(k));
  options.allow_tracefs_fallback = false;
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_TRUE((*opened)->oom_victims().attached);
  for (std::size_t k = 0; k < kStallKindCount; ++k) EXPECT_FALSE((*opened)->kind(static_cast<StallKind>(k)).attached);
}

// Only memcg's tp_btf programs made unavailable: memcg alone falls back to its classic
// tracepoints (and counts through them), every other kind stays on tp_btf, and the probe says
// tracefs is in use.
TEST_F(ReclaimStallLive, AKindWithoutTpBtfFallsBackAlone) {
  TracefsMount tracefs;
  if (!tracefs.available()) GTEST_SKIP() << "tracefs not mounted and mounting it failed: " << tracefs.error();
  ProbeOptions options;
  options.tp_btf_unavailable_for_test = {StallKind::kMemcg};
  auto opened = ReclaimStallProbe::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ReclaimStallProbe& probe = **opened;

  ASSERT_TRUE(probe.kind(StallKind::kMemcg).attached) << probe.kind(StallKind::kMemcg).reason;
  EXPECT_EQ(probe.kind(StallKind::kMemcg).mode, AttachMode::kTracepoint);
  for (StallKind kind : {StallKind::kDirect, StallKind::kSoftLimit, StallKind::kCompaction, StallKind::kThrottled}) {
    EXPECT_TRUE(probe.kind(kind).attached) << to_string(kind) << ": " << probe.kind(kind).reason;
    EXPECT_EQ(probe.kind(kind).mode, AttachMode::kTpBtf) << to_string(kind);
  }
  EXPECT_EQ(probe.mode(), AttachMode::kTracepoint);  // tracefs is needed now
  EXPECT_EQ(probe.not_attached(), "");

  ScratchMemcg cg(unique_name("fallback"));
  ASSERT_TRUE(cg.error().empty()) << cg.error();
  FileGuard file{"/var/tmp/" + unique_name("fallback") + ".dat"};
  run_file_workload(cg, file.path);
  if (HasFatalFailure()) return;

  auto reading = probe.read();
  ASSERT_TRUE(reading.ok()) << reading.error().message;
  const StallHistogram* h = find_histogram(*reading, StallKind::kMemcg, cg.inode());
  ASSERT_NE(h, nullptr) << "no memcg histogram through the classic tracepoints";
  print_histogram(*h);
  EXPECT_GT(h->count, 0u);
  EXPECT_EQ(std::accumulate(h->buckets.begin(), h->buckets.end(), std::uint64_t{0}), h->count);
}

// The same through the source and the exporter, as the daemon runs it: the missing kind is
// said once in degraded() (the same text every time, so the sampler logs it once), the
// snapshot and the exposition say which kinds are attached, and the cgroup's memcg stalls are
// exported.
TEST_F(ReclaimStallLive, TheSourceExportsWhichKindsAreAttached) {
  ReclaimStallOptions options;
  options.unavailable_for_test = {StallKind::kThrottled};
  ReclaimStallSource source(KernelPaths{}, options);
  auto probed = source.probe();
  ASSERT_TRUE(probed.ok()) << probed.error().message;
  const std::string degraded = source.degraded();
  EXPECT_TRUE(degraded.starts_with("not traced on this kernel: throttled (" + std::string(kThrottledMissingFromBtf)))
      << degraded;

  ScratchMemcg cg(unique_name("source"));
  ASSERT_TRUE(cg.error().empty()) << cg.error();
  FileGuard file{"/var/tmp/" + unique_name("source") + ".dat"};
  run_file_workload(cg, file.path);
  if (HasFatalFailure()) return;

  auto snapshot = std::make_shared<Snapshot>();
  auto sampled = source.sample(*snapshot);
  ASSERT_TRUE(sampled.ok()) << sampled.error().message;
  EXPECT_EQ(source.degraded(), degraded);
  ASSERT_TRUE(snapshot->reclaim_stall.has_value());
  const ReclaimStallSection& section = *snapshot->reclaim_stall;
  EXPECT_EQ(section.attach_mode, "tp_btf");
  EXPECT_EQ(section.kind_modes[static_cast<std::size_t>(StallKind::kThrottled)], "");
  EXPECT_EQ(section.kind_modes[static_cast<std::size_t>(StallKind::kMemcg)], "tp_btf");
  EXPECT_EQ(section.oom_victims_mode, "tp_btf");
  EXPECT_GT(section.node[static_cast<std::size_t>(StallKind::kMemcg)].count, 0u);
  EXPECT_EQ(section.node[static_cast<std::size_t>(StallKind::kThrottled)].count, 0u);
  const std::string cgroup = cg.path().substr(ScratchMemcg::root().size());
  const auto exported = std::find_if(section.cgroups.begin(), section.cgroups.end(), [&](const CgroupStall& c) {
    return c.cgroup == cgroup && c.kind == StallKind::kMemcg;
  });
  ASSERT_NE(exported, section.cgroups.end()) << "no memcg stalls exported for " << cgroup;
  EXPECT_GT(exported->stall.count, 0u);

  SnapshotStore store(1);
  store.publish(snapshot);
  prom::SnapshotCollector collector(store, {});
  std::string text;
  collector.render_text(text);
  for (const char* line : {"memdiag_reclaim_stall_kind_attached{kind=\"throttled\",mode=\"none\"} 0\n",
                           "memdiag_reclaim_stall_kind_attached{kind=\"memcg\",mode=\"tp_btf\"} 1\n",
                           "memdiag_reclaim_stall_kind_attached{kind=\"direct\",mode=\"tp_btf\"} 1\n",
                           "memdiag_oom_victims_attached{mode=\"tp_btf\"} 1\n",
                           "memdiag_reclaim_stall_probe_info{mode=\"tp_btf\"} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace memdiag
