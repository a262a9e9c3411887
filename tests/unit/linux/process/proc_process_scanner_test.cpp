// SPDX-License-Identifier: Apache-2.0
// The /proc process scanner: its parsers on strings, the scanner on the fixture tree
// tests/fixtures/proc-processes (and copies changed at test time), and the scanner on the real
// /proc against a child with 1,000 separate mappings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "probes/linux/cgroup/mountinfo_parser.hpp"
#include "probes/linux/process/proc_process_scanner.hpp"
#include "probes/linux/process/process_status_parser.hpp"
#include "tests/support/mappings_child.hpp"

// Counting allocations proves "allocation-free once warm" instead of inferring it from the
// vector's data pointer. Not under AddressSanitizer, which owns operator new itself.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMDIAG_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MEMDIAG_UNDER_ASAN 1
#endif

namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<std::size_t> g_allocations{0};
}  // namespace

#ifndef MEMDIAG_UNDER_ASAN
// noinline: inlined into callers, GCC pairs new with the free() inside and warns of a mismatch.
[[gnu::noinline]] void* operator new(std::size_t size) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace memdiag {
namespace {

namespace fs = std::filesystem;

const std::string kFixture = MEMDIAG_SOURCE_DIR "/tests/fixtures/proc-processes";

// ---- parse_process_status ---------------------------------------------------------------

const char* const kStatus =
    "Name:\tfixture srv\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Tgid:\t1234\n"
    "Pid:\t1234\n"
    "VmPeak:\t   10240 kB\n"
    "VmSize:\t    8192 kB\n"
    "VmRSS:\t    1792 kB\n"
    "RssAnon:\t    1024 kB\n"
    "RssFile:\t     512 kB\n"
    "RssShmem:\t     256 kB\n"
    "VmData:\t    2048 kB\n"
    "VmStk:\t     132 kB\n"
    "VmSwap:\t      64 kB\n"
    "Threads:\t1\n";

TEST(ProcessStatus, ReadsNameTgidAndMemoryInBytes) {
  auto status = parse_process_status(kStatus);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->name, "fixture srv");  // spaces are part of the name
  EXPECT_EQ(status->tgid, 1234);
  EXPECT_TRUE(status->has_mm);
  EXPECT_EQ(status->virtual_bytes, 8192u * 1024);
  EXPECT_EQ(status->rss_anon_bytes, 1024u * 1024);
  EXPECT_EQ(status->rss_file_bytes, 512u * 1024);
  EXPECT_EQ(status->rss_shmem_bytes, 256u * 1024);
  EXPECT_EQ(status->swap_bytes, 64u * 1024);
  EXPECT_EQ(status->data_bytes, 2048u * 1024);
  EXPECT_EQ(status->stack_bytes, 132u * 1024);
}

TEST(ProcessStatus, KernelThreadHasNoMm) {
  auto status =
      parse_process_status("Name:\tkthreadd\nState:\tS (sleeping)\nTgid:\t2\nKthread:\t1\nThreads:\t1\n");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->name, "kthreadd");
  EXPECT_FALSE(status->has_mm);
  EXPECT_EQ(status->virtual_bytes, 0u);
}

TEST(ProcessStatus, RefusesTruncatedText) {
  const std::string full = kStatus;
  auto mid_line = parse_process_status(full.substr(0, full.find("RssAnon") + 12));
  ASSERT_FALSE(mid_line);
  EXPECT_NE(mid_line.error().message.find("truncated"), std::string::npos) << mid_line.error().message;

  auto name_only = parse_process_status("Name:\tx\n");
  ASSERT_FALSE(name_only);
  EXPECT_NE(name_only.error().message.find("no Tgid"), std::string::npos) << name_only.error().message;

  auto no_name = parse_process_status("Tgid:\t7\nVmSize:\t1 kB\n");
  ASSERT_FALSE(no_name);
  EXPECT_NE(no_name.error().message.find("no Name"), std::string::npos) << no_name.error().message;
}

TEST(ProcessStatus, RefusesEmptyAndBlankText) {
  EXPECT_FALSE(parse_process_status(""));
  EXPECT_FALSE(parse_process_status("\n\n"));
}

TEST(ProcessStatus, RefusesGarbageInFieldsItReads) {
  const std::string base = "Name:\tx\nTgid:\t9\n";
  for (const char* line : {"VmSize:\t    lots kB\n", "RssAnon:\t-1 kB\n", "VmSwap:\t12 MB\n", "RssFile:\t12\n",
                           "RssShmem:\t1 kB extra\n", "VmSize:\t18446744073709551615 kB\n",
                           "VmSize:\t99999999999999999999 kB\n"}) {
    auto status = parse_process_status(base + line);
    ASSERT_FALSE(status) << line;
    EXPECT_NE(status.error().message.find("line 3"), std::string::npos) << status.error().message;
  }
  for (const char* tgid : {"Tgid:\tabc\n", "Tgid:\t0\n", "Tgid:\t2147483648\n", "Tgid:\t\n"}) {
    EXPECT_FALSE(parse_process_status(std::string("Name:\tx\n") + tgid)) << tgid;
  }
  EXPECT_FALSE(parse_process_status("Name:\tx\nTgid:\t9\nVmSize:\t1 kB\nVmSize:\t2 kB\n")) << "duplicate";
}

TEST(ProcessStatus, IgnoresFieldsItDoesNotRead) {
  auto status = parse_process_status("Name:\tx\nTgid:\t9\nVmPeak:\tnot a number\nno colon at all\nFuture:\t?\n");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_FALSE(status->has_mm);
}

TEST(ProcessStatus, HugeInputIsBounded) {
  // One 1 MB line of an unknown field: skipped, not copied.
  const std::string long_line = "Name:\tx\nTgid:\t9\nJunk:" + std::string(1 << 20, 'x') + "\n";
  EXPECT_TRUE(parse_process_status(long_line));
  // A 1 MB name is taken as a view; the record keeps 15 bytes of it.
  const std::string long_name = "Name:\t" + std::string(1 << 20, 'n') + "\nTgid:\t9\n";
  auto status = parse_process_status(long_name);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->name.size(), 1u << 20);
  // 1 MB of lines: refused at the field limit instead of walking it all.
  std::string many = "Name:\tx\nTgid:\t9\n";
  while (many.size() < (1 << 20)) many += "Junk:\t1\n";
  auto refused = parse_process_status(many);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("more fields"), std::string::npos) << refused.error().message;
}

// ---- unescape_process_name --------------------------------------------------------------

std::string unescaped(std::string_view escaped, std::size_t out_size = 16) {
  std::string out(out_size, '#');
  unescape_process_name(escaped, out.data(), out.size());
  return out.substr(0, out.find('\0'));
}

TEST(ProcessName, UndoesTheKernelsTwoEscapes) {
  EXPECT_EQ(unescaped("a\\nb\\\\c d"), "a\nb\\c d");
  EXPECT_EQ(unescaped("tab\\tstays"), "tab\\tstays");  // only \n and \\ are escaped by the kernel
  EXPECT_EQ(unescaped("ends\\"), "ends\\");
  EXPECT_EQ(unescaped(""), "");
}

TEST(ProcessName, KeepsAtMostOutSizeMinusOneBytes) {
  EXPECT_EQ(unescaped("kworker/u8:2-events_unbound"), "kworker/u8:2-ev");
  EXPECT_EQ(unescaped("abcdef", 4), "abc");
  EXPECT_EQ(unescaped("abcdef", 1), "");
  char untouched = '#';
  unescape_process_name("abc", &untouched, 0);
  EXPECT_EQ(untouched, '#');
}

// ---- memory_cgroup_of -------------------------------------------------------------------

const char* const kHybridCgroup =
    "9:name=systemd:/system.slice/srv.service\n"
    "4:memory:/process_api/56046ac4\n"
    "3:cpu,cpuacct:/\n"
    "0::/system.slice/srv.service\n";

TEST(ProcessCgroup, V1TakesTheMemoryControllersLine) {
  auto path = memory_cgroup_of(kHybridCgroup, CgroupVersion::kV1);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/process_api/56046ac4");

  auto in_list = memory_cgroup_of("7:blkio,memory,pids:/a:b\n", CgroupVersion::kV1);
  ASSERT_TRUE(in_list) << in_list.error().message;
  EXPECT_EQ(*in_list, "/a:b");  // ':' in a path is the path's
}

TEST(ProcessCgroup, V2TakesTheZeroLine) {
  auto path = memory_cgroup_of(kHybridCgroup, CgroupVersion::kV2);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, "/system.slice/srv.service");
  auto root = memory_cgroup_of("0::/\n", CgroupVersion::kV2);
  ASSERT_TRUE(root);
  EXPECT_EQ(*root, "/");
}

TEST(ProcessCgroup, MissingLineIsAnError) {
  EXPECT_FALSE(memory_cgroup_of("3:cpu,cpuacct:/\n0::/\n", CgroupVersion::kV1));
  EXPECT_FALSE(memory_cgroup_of("3:memoryx:/\n", CgroupVersion::kV1));  // a word, not a prefix
  EXPECT_FALSE(memory_cgroup_of("4:memory:/\n", CgroupVersion::kV2));
  EXPECT_FALSE(memory_cgroup_of("", CgroupVersion::kV1));
  EXPECT_FALSE(memory_cgroup_of("", CgroupVersion::kV2));
}

TEST(ProcessCgroup, GarbageIsAnError) {
  for (const char* text : {"4:memory\n", "garbage\n", "x:memory:/a\n", "4:memory:relative\n", "4:memory:\n",
                           "4:memory:/a\n4:memory:/b\n", "0::/a"}) {
    EXPECT_FALSE(memory_cgroup_of(text, CgroupVersion::kV1)) << text;
  }
  EXPECT_FALSE(memory_cgroup_of("0::/a", CgroupVersion::kV2)) << "no final newline: truncated";
}

// ---- ProcProcessScanner on fixture trees ------------------------------------------------

const ProcessMaps* find_pid(const std::vector<ProcessMaps>& out, int pid) {
  auto it = std::find_if(out.begin(), out.end(), [pid](const ProcessMaps& p) { return p.pid == pid; });
  return it == out.end() ? nullptr : &*it;
}

// A writable copy of the fixture tree, for cases git cannot hold. Removed at the end.
class FixtureCopy {
 public:
  FixtureCopy() {
    char name[] = "/tmp/memdiag-proc-processes-XXXXXX";
    root_ = ::mkdtemp(name);
    fs::copy(kFixture, root_, fs::copy_options::recursive);
  }
  ~FixtureCopy() { fs::remove_all(root_); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

TEST(ProcProcessScanner, FixtureTree) {
  ProcProcessScanner scanner(kFixture, CgroupVersion::kV1);
  EXPECT_EQ(scanner.mode(), "procfs");
  std::vector<ProcessMaps> out;
  auto st = scanner.scan(out);
  ASSERT_TRUE(st) << st.error().message;

  std::vector<int> pids;
  for (const auto& p : out) pids.push_back(p.pid);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{100, 500, 600}));  // not 2 (kernel thread), 300, 400, self

  const ProcessMaps* srv = find_pid(out, 100);
  ASSERT_NE(srv, nullptr);
  EXPECT_EQ(srv->map_count, 5u);  // six lines, the last [vsyscall]
  EXPECT_EQ(srv->comm_view(), "fixture srv");
  EXPECT_EQ(srv->virtual_bytes, 8192u * 1024);
  EXPECT_EQ(srv->rss_anon_bytes, 1024u * 1024);
  EXPECT_EQ(srv->rss_file_bytes, 512u * 1024);
  EXPECT_EQ(srv->rss_shmem_bytes, 256u * 1024);
  EXPECT_EQ(srv->rss_bytes(), 1792u * 1024);
  EXPECT_EQ(srv->swap_bytes, 64u * 1024);
  const std::string* path = scanner.cgroup_path(srv->cgroup_key);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(*path, "/system.slice/srv.service");

  const ProcessMaps* escaped = find_pid(out, 500);
  ASSERT_NE(escaped, nullptr);
  EXPECT_EQ(escaped->map_count, 3u);  // no [vsyscall] line
  EXPECT_EQ(escaped->comm_view(), "a\nb\\c d");
  EXPECT_EQ(escaped->cgroup_key, srv->cgroup_key);  // one path, interned once

  const ProcessMaps* no_cgroup = find_pid(out, 600);
  ASSERT_NE(no_cgroup, nullptr);
  EXPECT_EQ(no_cgroup->cgroup_key, 0u);
  EXPECT_EQ(scanner.cgroup_path(0), nullptr);
  EXPECT_EQ(scanner.cgroup_path(99), nullptr);

  const ProcessScanProblems& problems = scanner.problems();
  EXPECT_EQ(problems.vanished, 1u);   // 400: no maps
  EXPECT_EQ(problems.malformed, 2u);  // 300/status, 600/cgroup
  EXPECT_EQ(problems.unreadable, 0u);
  const bool first_is_either =  // directory order decides which comes first
      problems.first.rfind("300/status: line 7:", 0) == 0 || problems.first.rfind("600/cgroup: line 1:", 0) == 0;
  EXPECT_TRUE(first_is_either) << problems.first;

  // A second scan reports the same, not twice as much.
  ASSERT_TRUE(scanner.scan(out));
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(scanner.problems().vanished, 1u);
  EXPECT_EQ(scanner.problems().malformed, 2u);
}

TEST(ProcProcessScanner, V2ReadsTheZeroLine) {
  ProcProcessScanner scanner(kFixture, CgroupVersion::kV2);
  std::vector<ProcessMaps> out;
  ASSERT_TRUE(scanner.scan(out));
  const ProcessMaps* srv = find_pid(out, 100);
  ASSERT_NE(srv, nullptr);
  ASSERT_NE(scanner.cgroup_path(srv->cgroup_key), nullptr);
  EXPECT_EQ(*scanner.cgroup_path(srv->cgroup_key), "/system.slice/srv.service");
}

// As root (the tests' user) chmod 000 stops nothing, so an unreadable maps is made a directory:
// open succeeds and read fails with EISDIR, an error that is neither "gone" nor a parse error.
// The real EACCES is tested against /proc below, as an unprivileged user.
TEST(ProcProcessScanner, UnreadableMapsSkipsTheProcess) {
  FixtureCopy copy;
  fs::remove(copy.root() / "100/maps");
  fs::create_directory(copy.root() / "100/maps");
  ProcProcessScanner scanner(copy.root().string(), CgroupVersion::kV1);
  std::vector<ProcessMaps> out;
  ASSERT_TRUE(scanner.scan(out));
  EXPECT_EQ(find_pid(out, 100), nullptr);
  EXPECT_EQ(scanner.problems().unreadable, 1u);
  EXPECT_EQ(scanner.problems().vanished, 1u);
}

TEST(ProcProcessScanner, DanglingMapsIsVanished) {
  FixtureCopy copy;
  fs::remove(copy.root() / "100/maps");
  fs::create_symlink("/nonexistent/maps", copy.root() / "100/maps");
  ProcProcessScanner scanner(copy.root().string(), CgroupVersion::kV1);
  std::vector<ProcessMaps> out;
  ASSERT_TRUE(scanner.scan(out));
  EXPECT_EQ(find_pid(out, 100), nullptr);
  EXPECT_EQ(scanner.problems().vanished, 2u);
  EXPECT_EQ(scanner.problems().unreadable, 0u);
}

// [vsyscall] is found however the reads cut the file: here the last 64 KiB read ends 5 bytes
// into "[vsyscall]\n", and a second file is one line short of a full read.
TEST(ProcProcessScanner, VsyscallLineAcrossReadBoundaries) {
  FixtureCopy copy;
  const std::string vsyscall =
      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
  auto write_maps = [&](int pid, std::size_t total_size, bool with_vsyscall) {
    fs::create_directory(copy.root() / std::to_string(pid));
    for (const char* file : {"status", "cgroup"}) {
      fs::copy_file(copy.root() / "100" / file, copy.root() / std::to_string(pid) / file);
    }
    const std::string last = with_vsyscall ? vsyscall : std::string(vsyscall.size() - 1, 'y') + "\n";
    const std::string filler(63, 'x');
    std::string maps;
    std::size_t lines = 0;
    while (maps.size() + 64 + last.size() <= total_size) {
      maps += filler + "\n";
      ++lines;
    }
    maps.insert(0, total_size - last.size() - maps.size(), 'z');  // pad the first line
    maps += last;
    std::ofstream(copy.root() / std::to_string(pid) / "maps") << maps;
    EXPECT_EQ(maps.size(), total_size);
    return lines + 1;
  };
  const std::size_t lines_split = write_maps(800, 64 * 1024 + 5, true);
  const std::size_t lines_plain = write_maps(801, 64 * 1024 + 5, false);
  const std::size_t lines_whole = write_maps(802, 2 * 64 * 1024, true);
  ProcProcessScanner scanner(copy.root().string(), CgroupVersion::kV1);
  std::vector<ProcessMaps> out;
  ASSERT_TRUE(scanner.scan(out));
  ASSERT_NE(find_pid(out, 800), nullptr);
  ASSERT_NE(find_pid(out, 801), nullptr);
  ASSERT_NE(find_pid(out, 802), nullptr);
  EXPECT_EQ(find_pid(out, 800)->map_count, lines_split - 1);
  EXPECT_EQ(find_pid(out, 801)->map_count, lines_plain);
  EXPECT_EQ(find_pid(out, 802)->map_count, lines_whole - 1);
}

TEST(ProcProcessScanner, MissingRootFailsTheScan) {
  ProcProcessScanner scanner("/nonexistent/proc", CgroupVersion::kV1);
  std::vector<ProcessMaps> out(3);
  auto st = scanner.scan(out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("/nonexistent/proc"), std::string::npos) << st.error().message;
  EXPECT_TRUE(out.empty());
}

// ---- ProcProcessScanner on the real /proc -----------------------------------------------

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The memory hierarchy this machine has, as the daemon would find it.
CgroupVersion memory_version_here() {
  std::vector<MountEntry> mounts;
  const std::string mountinfo = read_text("/proc/self/mountinfo");
  if (!parse_mountinfo(mountinfo, mounts)) return CgroupVersion::kV2;
  return find_cgroup_mounts(mounts).v1_memory.empty() ? CgroupVersion::kV2 : CgroupVersion::kV1;
}

// The memory line of a /proc/PID/cgroup, found the simple way.
std::string memory_cgroup_line(const std::string& text, CgroupVersion version) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    const std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    const bool match = version == CgroupVersion::kV2 ? line.rfind("0::", 0) == 0
                                                      : controllers.find(",memory,") != std::string::npos;
    if (match) return line.substr(second + 1);
  }
  return "";
}

// A child with kChildMappings one-page anonymous mappings that cannot merge, all resident.
constexpr int kChildMappings = 1000;

TEST(ProcProcessScannerLive, CountsAChildsMappingsExactly) {
  test_support::MappingsChild child(kChildMappings, "memdiag-maps");
  ASSERT_TRUE(child.ready());
  const CgroupVersion version = memory_version_here();
  ProcProcessScanner scanner("/proc", version);
  std::vector<ProcessMaps> out;
  auto st = scanner.scan(out);
  ASSERT_TRUE(st) << st.error().message;

  const ProcessMaps* found = find_pid(out, child.pid());
  ASSERT_NE(found, nullptr) << "problems: " << scanner.problems().first;
  const std::string maps = read_text("/proc/" + std::to_string(child.pid()) + "/maps");
  std::size_t lines = std::count(maps.begin(), maps.end(), '\n');
  const std::string last_line = maps.substr(maps.rfind('\n', maps.size() - 2) + 1);
  if (last_line.find("[vsyscall]") != std::string::npos) --lines;
  EXPECT_EQ(found->map_count, lines);
  EXPECT_GE(found->map_count, 2u * kChildMappings - 1);
  EXPECT_GE(found->rss_anon_bytes, std::uint64_t{kChildMappings} * ::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(found->comm_view(), "memdiag-maps");
  std::string comm = read_text("/proc/" + std::to_string(child.pid()) + "/comm");
  EXPECT_EQ(found->comm_view(), comm.substr(0, comm.find('\n')));

  const std::string* cgroup = scanner.cgroup_path(found->cgroup_key);
  ASSERT_NE(cgroup, nullptr);
  EXPECT_EQ(*cgroup, memory_cgroup_line(read_text("/proc/" + std::to_string(child.pid()) + "/cgroup"), version));

  EXPECT_NE(find_pid(out, ::getpid()), nullptr) << "the scanning process itself";
  // Kernel threads are skipped: kthreadd, if this pid namespace shows it.
  const std::string kthreadd = read_text("/proc/2/status");
  if (!kthreadd.empty() && kthreadd.find("VmSize") == std::string::npos) {
    EXPECT_EQ(find_pid(out, 2), nullptr);
  }
  for (const auto& p : out) EXPECT_GT(p.map_count, 0u) << p.pid;
  // Not unreadable == 0: even root may not read every maps (a sandbox's pid 1 from another user
  // namespace is one). The kernel's own files never fail to parse.
  EXPECT_EQ(scanner.problems().malformed, 0u) << scanner.problems().first;
}

TEST(ProcProcessScannerLive, WarmScanAllocatesNothing) {
  ProcProcessScanner scanner("/proc", memory_version_here());
  std::vector<ProcessMaps> out;
  g_allocations = 0;
  g_count_allocations = true;
  const bool cold_ok = scanner.scan(out).ok();  // grows the vector, interns cgroup paths
  g_count_allocations = false;
  ASSERT_TRUE(cold_ok);
#ifndef MEMDIAG_UNDER_ASAN
  ASSERT_GT(g_allocations.load(), 0u) << "the counter counts: a cold scan allocates";
#endif
  // Room for processes started meanwhile (builds run beside the tests): only growth of the
  // vector or a cgroup never seen before may allocate, and neither is the scanner's steady state.
  out.reserve(out.size() + 256);
  ASSERT_TRUE(scanner.scan(out));
  const ProcessMaps* data = out.data();
  const std::size_t capacity = out.capacity();
  std::size_t allocations = SIZE_MAX;
  for (int attempt = 0; attempt < 3 && allocations != 0; ++attempt) {
    g_allocations = 0;
    g_count_allocations = true;
    const bool ok = scanner.scan(out).ok();
    g_count_allocations = false;
    ASSERT_TRUE(ok);
    allocations = g_allocations;
  }
  EXPECT_EQ(out.data(), data);
  EXPECT_EQ(out.capacity(), capacity);
  EXPECT_FALSE(out.empty());
#ifndef MEMDIAG_UNDER_ASAN
  EXPECT_EQ(allocations, 0u);
#endif
}

// The real EACCES: an unprivileged user may not open other users' maps. Run in a child that
// drops to nobody, so the test process keeps root.
TEST(ProcProcessScannerLive, OtherUsersMapsAreUnreadable) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  int result[2];
  ASSERT_EQ(::pipe(result), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(result[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ProcProcessScanner scanner("/proc", memory_version_here());
    std::vector<ProcessMaps> out;
    if (!scanner.scan(out)) ::_exit(3);
    const std::string report = std::to_string(scanner.problems().unreadable) + " " + scanner.problems().first;
    if (::write(result[1], report.data(), report.size()) < 0) ::_exit(4);
    ::_exit(0);
  }
  ::close(result[1]);
  std::string report;
  char buffer[512];
  for (ssize_t n; (n = ::read(result[0], buffer, sizeof buffer)) > 0;) report.append(buffer, n);
  ::close(result[0]);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child status " << wstatus;
  // At least this test process (root) is unreadable to nobody.
  EXPECT_GE(std::stoul(report), 1u) << report;
  EXPECT_NE(report.find("/maps: Permission denied"), std::string::npos) << report;
}

}  // namespace
}  // namespace memdiag
