// SPDX-License-Identifier: Apache-2.0
// The eBPF task iterator: load it into this kernel, fork a child with a known number
// of separate mappings, and find exactly that child, with /proc's own figures, in one scan.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "probes/bpf/task_maps.h"
#include "probes/bpf/task_maps_iterator.hpp"
#include "probes/linux/process/proc_process_scanner.hpp"
#include "tests/support/mappings_child.hpp"
#include "tests/support/promise_child.hpp"

namespace memdiag {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMappings = 1000;
constexpr const char* kChildComm = "memdiag-tmchild";  // 15 characters: fills comm exactly

TEST(TaskMapsRecord, LayoutIsFixed) {
  EXPECT_EQ(sizeof(memdiag_task_maps), 88u);
  EXPECT_EQ(offsetof(memdiag_task_maps, rss_file_pages), 8u);
  EXPECT_EQ(offsetof(memdiag_task_maps, data_vm_pages), 48u);
  EXPECT_EQ(offsetof(memdiag_task_maps, stack_vm_pages), 56u);
  EXPECT_EQ(offsetof(memdiag_task_maps, memcg_id), 64u);
  EXPECT_EQ(offsetof(memdiag_task_maps, comm), 72u);
}

TEST(TaskMapsIterator, MissingBtfFileIsNamed) {
  auto it = TaskMapsIterator::open("/nonexistent/vmlinux.btf");
  ASSERT_FALSE(it.ok());
  EXPECT_NE(it.error().message.find("no BTF at /nonexistent/vmlinux.btf"), std::string::npos) << it.error().message;
}

// ---- Real: as root on a kernel with BTF ----

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The v1 memory cgroup directory of `pid` (from its "N:memory:/path" line), or empty.
std::string memory_cgroup_dir(int pid) {
  for (const std::string& line : read_lines("/proc/" + std::to_string(pid) + "/cgroup")) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (line.substr(first + 1, second - first - 1) != "memory") continue;
    return "/sys/fs/cgroup/memory" + line.substr(second + 1);
  }
  return {};
}

const ProcessMaps* find_pid(const std::vector<ProcessMaps>& all, int pid) {
  auto it = std::find_if(all.begin(), all.end(), [&](const ProcessMaps& p) { return p.pid == pid; });
  return it == all.end() ? nullptr : &*it;
}

class TaskMapsLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (CAP_BPF, CAP_PERFMON)";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "kernel has no BTF (/sys/kernel/btf/vmlinux)";
    auto it = TaskMapsIterator::open();
    ASSERT_TRUE(it.ok()) << it.error().message;
    iterator_ = std::move(it.value());
  }
  std::unique_ptr<TaskMapsIterator> iterator_;
};

TEST_F(TaskMapsLive, ChildWithThousandMappingsMatchesProc) {
  test_support::MappingsChild child(kMappings, kChildComm);
  ASSERT_GT(child.pid(), 0) << "fork: " << std::strerror(errno);
  ASSERT_TRUE(child.ready()) << "child did not set up its mappings";
  const std::string proc = "/proc/" + std::to_string(child.pid());

  const std::vector<std::string> maps = read_lines(proc + "/maps");
  ASSERT_GT(maps.size(), kMappings);
  // [vsyscall] (x86-64 vsyscall emulation) is a gate area shown by /proc but not a VMA of the
  // mm, so mm->map_count does not count it.
  const bool vsyscall = maps.back().find("[vsyscall]") != std::string::npos;
  const std::size_t expected_vmas = maps.size() - (vsyscall ? 1 : 0);

  std::vector<ProcessMaps> all;
  Status s = iterator_->scan(all);
  ASSERT_TRUE(s.ok()) << s.error().message;

  const ProcessMaps* rec = find_pid(all, child.pid());
  ASSERT_NE(rec, nullptr) << "child " << child.pid() << " missing from " << all.size() << " records";
  EXPECT_EQ(rec->map_count, expected_vmas) << "/proc maps lines: " << maps.size() << ", vsyscall line: " << vsyscall;
  EXPECT_GE(rec->map_count, 2 * kMappings);  // the RW pages plus the PROT_NONE gaps between them
  EXPECT_GE(rec->rss_anon_bytes, kMappings * kPage);
  EXPECT_EQ(rec->comm_view(), kChildComm);
  EXPECT_EQ(rec->comm_view(), read_lines(proc + "/comm").at(0));
  EXPECT_GE(rec->virtual_bytes, 2 * kMappings * kPage);

  // memcg: the kernfs id is the inode of the v1 memory cgroup directory.
  const std::string memcg_dir = memory_cgroup_dir(child.pid());
  if (memcg_dir.empty() || !std::filesystem::exists(memcg_dir)) {
    ADD_FAILURE() << "no v1 memory cgroup directory for the child (" << memcg_dir << ")";
  } else {
    struct stat st {};
    ASSERT_EQ(::stat(memcg_dir.c_str(), &st), 0) << memcg_dir;
    EXPECT_EQ(rec->cgroup_key, st.st_ino) << memcg_dir;
  }

  // The RSS split agrees with the kernel's own /proc view (same counters, approximate).
  for (const std::string& line : read_lines(proc + "/status")) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "RssAnon: %llu kB", &kib) == 1) {
      EXPECT_NEAR(static_cast<double>(rec->rss_anon_bytes), kib * 1024.0, 64.0 * kPage) << line;
    }
    if (std::sscanf(line.c_str(), "VmSize: %llu kB", &kib) == 1) {
      EXPECT_EQ(rec->virtual_bytes, kib * 1024) << line;
    }
  }
}

// /proc/PID/status's "Field:  N kB" in bytes, or nullopt.
std::optional<std::uint64_t> status_bytes(int pid, const char* field) {
  const std::string format = std::string(field) + ": %llu kB";
  for (const std::string& line : read_lines("/proc/" + std::to_string(pid) + "/status")) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), format.c_str(), &kib) == 1) return kib * 1024;
  }
  return std::nullopt;
}

// The unbacked promise at the process level: a child maps 1 GiB private writable and
// does not touch it. Both scanners must see exactly the kernel's VmData + VmStk as its
// committed private size and at least 1 GiB of it unbacked; after it touches 256 MiB, that
// much moves from unbacked to resident anon.
TEST_F(TaskMapsLive, UnbackedPromiseOfAChildAgreesWithProc) {
  constexpr std::uint64_t kMiB = 1 << 20;
  constexpr std::uint64_t kRegion = 1024 * kMiB;
  constexpr std::uint64_t kTouched = 256 * kMiB;
  // Inherited copy-on-write pages of this test process count in the child's RssAnon; a few
  // MiB. The RSS counters the iterator reads lag by at most a per-CPU batch; THP may round.
  constexpr double kSlack = 32.0 * kMiB;
  test_support::PromiseChild child(kRegion, "memdiag-promise");
  ASSERT_GT(child.pid(), 0) << "fork: " << std::strerror(errno);
  ASSERT_TRUE(child.ready()) << "child did not map its region";
  ProcProcessScanner procfs("/proc", std::nullopt);

  struct Seen {
    ProcessMaps bpf;
    ProcessMaps proc;
    std::uint64_t vm_data_stk = 0;
  };
  auto look = [&]() -> std::optional<Seen> {
    Seen seen;
    std::vector<ProcessMaps> all;
    if (Status s = iterator_->scan(all); !s.ok()) {
      ADD_FAILURE() << s.error().message;
      return std::nullopt;
    }
    const ProcessMaps* bpf = find_pid(all, child.pid());
    if (bpf == nullptr) {
      ADD_FAILURE() << "child missing from the iterator's scan";
      return std::nullopt;
    }
    seen.bpf = *bpf;
    if (Status s = procfs.scan(all); !s.ok()) {
      ADD_FAILURE() << s.error().message;
      return std::nullopt;
    }
    const ProcessMaps* proc = find_pid(all, child.pid());
    if (proc == nullptr) {
      ADD_FAILURE() << "child missing from the /proc scan";
      return std::nullopt;
    }
    seen.proc = *proc;
    const auto data = status_bytes(child.pid(), "VmData");
    const auto stack = status_bytes(child.pid(), "VmStk");
    if (!data || !stack) {
      ADD_FAILURE() << "no VmData/VmStk in the child's status";
      return std::nullopt;
    }
    seen.vm_data_stk = *data + *stack;
    return seen;
  };

  const auto before = look();
  ASSERT_TRUE(before);
  // The child is paused on a pipe: its mappings do not change between the reads.
  EXPECT_EQ(before->bpf.committed_private_bytes, before->vm_data_stk);
  EXPECT_EQ(before->proc.committed_private_bytes, before->vm_data_stk);
  EXPECT_GE(before->bpf.committed_private_bytes, kRegion);
  EXPECT_GE(static_cast<double>(before->bpf.unbacked_promise_bytes()), kRegion - kSlack);
  EXPECT_GE(static_cast<double>(before->proc.unbacked_promise_bytes()), kRegion - kSlack);
  EXPECT_NEAR(static_cast<double>(before->bpf.unbacked_promise_bytes()),
              static_cast<double>(before->proc.unbacked_promise_bytes()), 64.0 * kPage);

  ASSERT_TRUE(child.touch(kTouched));
  const auto after = look();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->bpf.committed_private_bytes, after->vm_data_stk);
  EXPECT_EQ(after->proc.committed_private_bytes, after->vm_data_stk);
  EXPECT_EQ(after->bpf.committed_private_bytes, before->bpf.committed_private_bytes) << "touching promises nothing new";
  for (const auto& [was, is, scanner] : {std::tuple{before->bpf, after->bpf, "bpf_iter"},
                                         std::tuple{before->proc, after->proc, "procfs"}}) {
    const double unbacked_drop =
        static_cast<double>(was.unbacked_promise_bytes()) - static_cast<double>(is.unbacked_promise_bytes());
    const double anon_rise = static_cast<double>(is.rss_anon_bytes) - static_cast<double>(was.rss_anon_bytes);
    EXPECT_NEAR(unbacked_drop, kTouched, 8.0 * kMiB) << scanner;
    EXPECT_NEAR(anon_rise, kTouched, 8.0 * kMiB) << scanner;
  }
}

TEST_F(TaskMapsLive, OnlyProcessLeadersWithAnMm) {
  // A second thread in this process: it shares the mm but must not get its own record.
  std::atomic<long> tid{0};
  std::atomic<bool> stop{false};
  std::thread thread([&] {
    tid = ::syscall(SYS_gettid);
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::yield();

  std::vector<ProcessMaps> all;
  Status s = iterator_->scan(all);
  stop = true;
  thread.join();
  ASSERT_TRUE(s.ok()) << s.error().message;

  EXPECT_EQ(find_pid(all, 2), nullptr) << "kthreadd (pid 2) is a kernel thread";
  EXPECT_EQ(find_pid(all, static_cast<int>(tid.load())), nullptr) << "non-leader thread " << tid.load();
  const ProcessMaps* self = find_pid(all, ::getpid());
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->comm_view(), read_lines("/proc/self/comm").at(0));
  EXPECT_GT(self->map_count, 0u);
  EXPECT_GT(self->rss_anon_bytes + self->rss_file_bytes, 0u);

  // No kernel thread anywhere: every record's /proc entry (if still alive) has a non-empty maps.
  for (const ProcessMaps& p : all) {
    EXPECT_GT(p.map_count, 0u) << p.pid << " " << p.comm_view();
    EXPECT_GT(p.virtual_bytes, 0u) << p.pid << " " << p.comm_view();
  }
  // Pids come in the kernel's (ascending) order, one record each.
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(), [](const ProcessMaps& a, const ProcessMaps& b) { return a.pid < b.pid; }));
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end(),
                               [](const ProcessMaps& a, const ProcessMaps& b) { return a.pid == b.pid; }),
            all.end());
}

TEST_F(TaskMapsLive, ScanReusesCapacity) {
  std::vector<ProcessMaps> all;
  all.reserve(1 << 15);
  const ProcessMaps* data = all.data();
  for (int i = 0; i < 3; ++i) {
    Status s = iterator_->scan(all);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(all.data(), data) << "scan " << i << " reallocated";
  }
}

}  // namespace
}  // namespace memdiag
