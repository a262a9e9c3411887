// SPDX-License-Identifier: Apache-2.0
// What sampling the memory cgroups costs per cgroup, and what a scrape of them costs (the cgroup
// source's benchmark), against real cgroups created for the purpose. Needs root and a cgroup v1
// memory hierarchy at /sys/fs/cgroup/memory (v1 or hybrid); otherwise it prints "skipped: ..."
// and exits 0 without measuring anything.
//
// It creates /sys/fs/cgroup/memory/memdiag-bench-<pid>/gNN/cNN (by default 40 groups of 50
// leaves: 2,000 leaves, 2,041 cgroups with the groups and the parent) and, when the cgroup2
// mount /sys/fs/cgroup/unified exists, the same directories there: the twins whose
// memory.pressure the hybrid layout reads. Everything it created is removed when it ends,
// also on error or on a fatal signal; directories left by an earlier run that was killed
// (SIGKILL) are removed at the next start.
//
//   CgroupSample/cap:500    one CgroupSource::sample() over all of them, as the daemon does it
//                           (max_cgroups 500, the default), tree unchanged since the last
//                           sample: the figure for the < 25 us target
//   CgroupSample/cap:none   the same exporting every cgroup (ranking and moving, no cap)
//   CgroupSample/after_sleep  cap 500 with 10 ms of sleep (not timed) before each sample
//   CgroupSample/tree_changed cap 500 after a cgroup was created and removed (not timed): the
//                           sample walks the whole tree again
//   CgroupSample/first      a new source's first sample (walk, watches, opening every file);
//                           the others take that first sample before their timing starts
//   Part/discover, Part/read  the directory walk alone, the CgroupReader alone (all files)
//   Floor/same_reads_kept_open  bare C: pread() of exactly the files one sample reads, on
//                           descriptors opened beforehand: the floor the ratio is taken against
//   Floor/walk+reads        bare C: what a naive reader costs: the walk (opendir/readdir) and,
//                           per cgroup, stat() and open/read/close of every file
//   Floor/walk, Floor/reads, Floor/file:<name>  its parts, to see which file costs what
//   Alt/reads_openat_dirfd  the naive reads opened relative to a descriptor of the cgroup's
//                           directory (one path component resolved per open)
//   Alt/reads_kept_open     every file of every cgroup kept open, one pread() each
//   RenderText/cap:500      SnapshotCollector::render_text() of a snapshot holding meminfo and
//                           the cgroup section at cap 500: what /metrics serves
//   RenderText/meminfo_only the same snapshot without the cgroup section
//
// Own flags (before or among Google Benchmark's): --cgroups=N leaves (default 2000),
// --fanout=N leaves per group (default 50). All benchmarks report process CPU time.
#include <benchmark/benchmark.h>

#include "tests/bench/exposition_samples.hpp"
#include "tests/bench/recording_reporter.hpp"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "exporters/prometheus/snapshot_collector.hpp"
#include "probes/core/snapshot_store.hpp"
#include "probes/linux/cgroup/cgroup_reader.hpp"
#include "probes/linux/cgroup/cgroup_tree.hpp"
#include "probes/linux/cgroup/kubernetes_identity.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"
#include "tests/support/exit_cleanup.hpp"

namespace {

using memdiag::bench::count_samples;
using memdiag::bench::RecordingReporter;

constexpr const char* kV1Root = "/sys/fs/cgroup/memory";
constexpr const char* kV2Root = "/sys/fs/cgroup/unified";
constexpr const char* kParentPrefix = "memdiag-bench-";
constexpr double kPerCgroupTargetUs = 25;
constexpr std::size_t kCap = 500;

// Where lines for people go: stdout, or stderr when stdout carries JSON or CSV.
std::FILE* g_info = stdout;

// --- The cgroups: created once, removed whatever happens. ---

// Directories in creation order (parents first), one list per hierarchy. Built completely
// before the first mkdir and never changed afterwards, so the signal handler can walk them.
std::vector<std::string> g_dirs[2];
// How far creation got in each list: index of the last mkdir attempted + 1. The handler also
// tries that last one, which may or may not exist.
volatile sig_atomic_t g_attempted[2] = {0, 0};

// Async-signal-safe: only rmdir(2), children before their parents (reverse creation order).
// Idempotent: what is already gone fails with ENOENT. Run at exit and on fatal signals
// (SIGPIPE too: stdout piped into a reader that quit ends the run, cleaned up).
void rmdir_created_dirs() {
  for (int h = 0; h < 2; ++h) {
    for (sig_atomic_t i = g_attempted[h]; i > 0; --i) ::rmdir(g_dirs[h][static_cast<std::size_t>(i - 1)].c_str());
  }
}

bool is_dir(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// rmdir of a cgroup subtree, deepest first. Cgroup directories only hold control files, which
// go with the directory; a cgroup that still has tasks stays (EBUSY) and is reported.
int remove_tree(const std::string& path) {
  int failures = 0;
  if (DIR* dir = ::opendir(path.c_str())) {
    std::vector<std::string> children;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        children.push_back(path + "/" + e->d_name);
      }
    }
    ::closedir(dir);
    for (const auto& child : children) failures += remove_tree(child);
  }
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
    std::fprintf(stderr, "cannot remove %s: %s\n", path.c_str(), std::strerror(errno));
    ++failures;
  }
  return failures;
}

// Parents left by a run that could not clean up (SIGKILL, e.g. a ctest timeout): those whose
// pid no longer exists. Assumes one pid namespace for all runs sharing this cgroupfs.
void remove_stale_parents() {
  for (const char* root : {kV1Root, kV2Root}) {
    DIR* dir = ::opendir(root);
    if (dir == nullptr) continue;
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_type != DT_DIR || std::strncmp(e->d_name, kParentPrefix, std::strlen(kParentPrefix)) != 0) continue;
      char* end = nullptr;
      const long pid = std::strtol(e->d_name + std::strlen(kParentPrefix), &end, 10);
      if (end == nullptr || *end != '\0' || pid <= 0) continue;
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(std::string(root) + "/" + e->d_name);
    }
    ::closedir(dir);
    for (const auto& path : stale) {
      std::fprintf(g_info, "removing %s, left by an earlier run that was killed\n", path.c_str());
      remove_tree(path);
    }
  }
}

struct Layout {
  int leaves = 2000;
  int fanout = 50;
  bool twins = false;         // cgroup2 twins created under kV2Root
  std::string relative;       // "/memdiag-bench-<pid>"
  std::size_t cgroups = 0;    // parent + groups + leaves
};
Layout g_layout;

// Builds the lists, then creates the directories. false (with the reason in `why`) if the
// kernel refuses a mkdir; `refused_first` then says whether it was the very first (a read-only
// cgroupfs in a container: nothing to measure here) or a later one (a real error).
bool create_tree(Layout& layout, std::string& why, bool& refused_first) {
  layout.relative = "/" + std::string(kParentPrefix) + std::to_string(::getpid());
  layout.twins = is_dir(kV2Root) && ::access((std::string(kV2Root) + "/cgroup.procs").c_str(), F_OK) == 0;
  const int groups = (layout.leaves + layout.fanout - 1) / layout.fanout;
  std::vector<std::string> relatives{layout.relative};
  for (int g = 0, left = layout.leaves; g < groups; ++g) {
    char name[32];
    std::snprintf(name, sizeof name, "/g%02d", g);
    const std::string group = layout.relative + name;
    relatives.push_back(group);
    for (int c = 0; c < layout.fanout && left > 0; ++c, --left) {
      std::snprintf(name, sizeof name, "/c%02d", c);
      relatives.push_back(group + name);
    }
  }
  layout.cgroups = relatives.size();
  for (int h = 0; h < 2; ++h) {
    if (h == 1 && !layout.twins) break;
    g_dirs[h].reserve(relatives.size());
    for (const auto& r : relatives) g_dirs[h].push_back((h == 0 ? kV1Root : kV2Root) + r);
  }
  for (int h = 0; h < 2; ++h) {
    for (std::size_t i = 0; i < g_dirs[h].size(); ++i) {
      g_attempted[h] = static_cast<sig_atomic_t>(i + 1);
      if (::mkdir(g_dirs[h][i].c_str(), 0755) != 0) {
        why = "mkdir " + g_dirs[h][i] + ": " + std::strerror(errno);
        refused_first = h == 0 && i == 0;
        g_attempted[h] = static_cast<sig_atomic_t>(i);
        return false;
      }
    }
  }
  return true;
}

// The normal end: removes everything, then checks that nothing is left.
bool remove_tree_and_report() {
  rmdir_created_dirs();
  memdiag::test_support::exit_cleanup_done();
  std::size_t left = 0;
  for (const auto& list : g_dirs) {
    for (const auto& dir : list) left += is_dir(dir) ? 1 : 0;
  }
  // Anything left (a cgroup someone put a task into meanwhile): try the recursive way too.
  if (left > 0) {
    remove_tree(std::string(kV1Root) + g_layout.relative);
    if (g_layout.twins) remove_tree(std::string(kV2Root) + g_layout.relative);
    left = 0;
    for (const auto& list : g_dirs) {
      for (const auto& dir : list) left += is_dir(dir) ? 1 : 0;
    }
  }
  std::fprintf(g_info, "cleanup: removed %zu + %zu cgroup directories (memory, unified), %zu left\n", g_dirs[0].size(),
              g_dirs[1].size(), left);
  return left == 0;
}

memdiag::CgroupOptions cgroup_options(std::size_t cap) {
  memdiag::CgroupOptions options;
  options.cgroup_discovery.include = {g_layout.relative, g_layout.relative + "/*"};
  options.max_cgroups = cap;
  return options;
}

std::unique_ptr<memdiag::Source> make_cgroup_source(std::size_t cap) {
  auto source = memdiag::make_source("cgroup", memdiag::KernelPaths{}, cgroup_options(cap));
  if (!source || !source->probe()) return nullptr;
  return source;
}

// --- The source, whole and in parts. ---

// User-space CPU of the process over a benchmark loop (getrusage), per cgroup per iteration,
// as the counter "user_us": the share the code controls; the rest is the kernel's work.
class UserTime {
 public:
  UserTime() { start_ = now_us(); }
  void report(benchmark::State& state, double cgroups) const {
    const double iterations = static_cast<double>(state.iterations());
    if (iterations > 0 && cgroups > 0) state.counters["user_us"] = (now_us() - start_) / iterations / cgroups;
  }

 private:
  static double now_us() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec) * 1e6 + static_cast<double>(usage.ru_utime.tv_usec);
  }
  double start_;
};

// How the sample is disturbed before each iteration (outside the timing).
enum class Before { kNothing, kSleep, kTreeChange };

// The daemon's steady state: one source sampling again and again. Its first sample (the walk
// and opening every file) is taken before the timing starts; BM_CgroupFirstSample measures it.
void BM_CgroupSample(benchmark::State& state, std::size_t cap, Before before) {
  auto source = make_cgroup_source(cap);
  memdiag::Snapshot first;
  if (!source || !source->sample(first)) {
    state.SkipWithError("the cgroup source does not probe or sample");
    return;
  }
  std::size_t discovered = 0, exported = 0;
  const UserTime user;
  for (auto _ : state) {
    if (before == Before::kSleep) {
      state.PauseTiming();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      state.ResumeTiming();
    } else if (before == Before::kTreeChange) {
      // A cgroup created and removed: the inotify watch makes the next sample walk the tree.
      state.PauseTiming();
      const std::string extra = std::string(kV1Root) + g_layout.relative + "/bench-churn";
      ::mkdir(extra.c_str(), 0755);
      ::rmdir(extra.c_str());
      state.ResumeTiming();
    }
    memdiag::Snapshot snap;
    if (!source->sample(snap) || !snap.cgroups) {
      state.SkipWithError("the cgroup source failed to sample");
      break;
    }
    discovered = snap.cgroups->discovered;
    exported = snap.cgroups->cgroups.size();
    benchmark::DoNotOptimize(snap);
  }
  user.report(state, static_cast<double>(discovered));
  state.counters["cgroups"] = static_cast<double>(discovered);
  state.counters["exported"] = static_cast<double>(exported);
  state.counters["per_cgroup"] = benchmark::Counter(static_cast<double>(discovered),
                                                    benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A new source's first sample, as at daemon start or after a SIGHUP: the walk, the inotify
// watches and opening every file it keeps open.
void BM_CgroupFirstSample(benchmark::State& state) {
  std::size_t discovered = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto source = make_cgroup_source(kCap);
    state.ResumeTiming();
    memdiag::Snapshot snap;
    if (!source || !source->sample(snap) || !snap.cgroups) {
      state.SkipWithError("the cgroup source failed to sample");
      break;
    }
    discovered = snap.cgroups->discovered;
    state.PauseTiming();
    source.reset();  // closing the descriptors is not part of a sample
    state.ResumeTiming();
  }
  state.counters["cgroups"] = static_cast<double>(discovered);
  state.counters["per_cgroup"] = benchmark::Counter(static_cast<double>(discovered),
                                                    benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_PartDiscover(benchmark::State& state) {
  const auto options = cgroup_options(kCap);
  std::size_t found = 0;
  const UserTime user;
  for (auto _ : state) {
    auto list = memdiag::discover_cgroups(kV1Root, options.cgroup_discovery);
    found = list.size();
    benchmark::DoNotOptimize(list);
  }
  user.report(state, static_cast<double>(found));
  state.counters["cgroups"] = static_cast<double>(found);
  state.counters["per_cgroup"] = benchmark::Counter(static_cast<double>(found),
                                                    benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The CgroupReader reading everything of every discovered cgroup (core and details, as if no
// cap applied), without the walk, the identity labels and the ranking.
void BM_PartRead(benchmark::State& state) {
  const auto options = cgroup_options(kCap);
  const auto list = memdiag::discover_cgroups(kV1Root, options.cgroup_discovery);
  const std::string v1_root = kV1Root, v2_root = g_layout.twins ? kV2Root : "";
  memdiag::CgroupReader reader;
  const UserTime user;
  for (auto _ : state) {
    for (const auto& d : list) {
      memdiag::CgroupSample c;
      const std::string dir = v1_root + d.path;
      const std::string psi_dir = v2_root.empty() ? "" : v2_root + d.path;
      auto& files = reader.files_for(d.path);
      auto outcome = reader.read_core(memdiag::CgroupVersion::kV1, files, d.path == "/", dir, psi_dir, c);
      reader.read_details(memdiag::CgroupVersion::kV1, files, dir, c, outcome);
      benchmark::DoNotOptimize(outcome);
      benchmark::DoNotOptimize(c);
    }
    reader.end_sample();
  }
  user.report(state, static_cast<double>(list.size()));
  state.counters["cgroups"] = static_cast<double>(list.size());
  state.counters["per_cgroup"] = benchmark::Counter(static_cast<double>(list.size()),
                                                    benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- The floor: the same kernel work in bare C. ---

// What CgroupReader::read() opens per cgroup in v1 and hybrid mode, in its order
// (probes/linux/cgroup/cgroup_reader.cpp: read_v1, read_stat, read_pressure). Keep in sync.
constexpr const char* kV1Files[] = {"memory.usage_in_bytes",       "memory.limit_in_bytes",
                                    "memory.failcnt",              "memory.memsw.usage_in_bytes",
                                    "memory.memsw.limit_in_bytes", "memory.oom_control",
                                    "memory.stat"};
constexpr const char* kPsiFile = "memory.pressure";  // in the cgroup2 twin (hybrid)
constexpr int kAllFiles = -1;

char g_read_buffer[4096];  // CgroupReader reads 4 KiB at a time until end of file too
char g_path[4096];

long read_file_to_end(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long total = 0;
  for (ssize_t n; (n = ::read(fd, g_read_buffer, sizeof g_read_buffer)) > 0;) total += n;
  ::close(fd);
  return total;
}

// The selected directories' relative paths, NUL-separated in one reused buffer.
struct PathArena {
  std::vector<char> bytes;
  std::vector<std::size_t> starts;
  void clear() {
    bytes.clear();
    starts.clear();
  }
  const char* at(std::size_t i) const { return bytes.data() + starts[i]; }
};

// The walk discover_cgroups() does: every directory of the hierarchy within depth 6, d_type
// from readdir, "." and ".." skipped; selection by a prefix compare instead of fnmatch.
void floor_walk(char* rel, std::size_t rel_len, int depth, std::size_t root_len, PathArena& selected) {
  g_path[root_len] = '\0';
  std::memcpy(g_path + root_len, rel, rel_len + 1);
  DIR* dir = ::opendir(g_path);
  if (dir == nullptr) return;
  const std::string_view here(rel, rel_len);
  const std::string_view mine = g_layout.relative;
  if (here.substr(0, mine.size()) == mine && (here.size() == mine.size() || here[mine.size()] == '/')) {
    selected.starts.push_back(selected.bytes.size());
    selected.bytes.insert(selected.bytes.end(), rel, rel + rel_len + 1);
  }
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_type != DT_DIR || std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (depth >= 6) continue;
    const std::size_t name_len = std::strlen(e->d_name);
    if (rel_len + 1 + name_len + 1 + root_len + 32 > sizeof g_path) continue;
    rel[rel_len] = '/';
    std::memcpy(rel + rel_len + 1, e->d_name, name_len + 1);
    floor_walk(rel, rel_len + 1 + name_len, depth + 1, root_len, selected);
    rel[rel_len] = '\0';
  }
  ::closedir(dir);
}

void floor_walk_all(PathArena& selected) {
  selected.clear();
  struct stat st{};
  ::stat(kV1Root, &st);  // the source's check that the hierarchy is still there
  const std::size_t root_len = std::strlen(kV1Root);
  std::memcpy(g_path, kV1Root, root_len);
  char rel[4096] = "";
  floor_walk(rel, 0, 0, root_len, selected);
}

// Path of `root` + `rel` + "/" + `name` in g_path.
const char* floor_path(const char* root, const char* rel, const char* name) {
  char* p = g_path;
  for (const char* s : {root, rel}) {
    const std::size_t n = std::strlen(s);
    std::memcpy(p, s, n);
    p += n;
  }
  if (name != nullptr) {
    *p++ = '/';
    std::strcpy(p, name);
  } else {
    *p = '\0';
  }
  return g_path;
}

// `file`: an index into kV1Files, kV1Files' size for the PSI twin's file, kAllFiles for all
// of them plus the two stat() calls the reader makes per cgroup.
long floor_reads(const PathArena& selected, int file) {
  constexpr int kV1Count = static_cast<int>(std::size(kV1Files));
  long bytes = 0;
  struct stat st{};
  for (std::size_t i = 0; i < selected.starts.size(); ++i) {
    const char* rel = selected.at(i);
    if (file == kAllFiles) ::stat(floor_path(kV1Root, rel, nullptr), &st);
    for (int f = 0; f < kV1Count; ++f) {
      if (file == kAllFiles || file == f) bytes += read_file_to_end(floor_path(kV1Root, rel, kV1Files[f]));
    }
    if (g_layout.twins && (file == kAllFiles || file == kV1Count)) {
      bytes += read_file_to_end(floor_path(kV2Root, rel, kPsiFile));
    }
    if (file == kAllFiles) ::stat(floor_path(kV1Root, rel, nullptr), &st);
  }
  return bytes;
}

void BM_FloorAll(benchmark::State& state, bool walk, bool reads) {
  PathArena selected;
  floor_walk_all(selected);
  long bytes = 0;
  const UserTime user;
  for (auto _ : state) {
    if (walk) floor_walk_all(selected);
    if (reads) bytes = floor_reads(selected, kAllFiles);
    benchmark::DoNotOptimize(bytes);
  }
  user.report(state, static_cast<double>(selected.starts.size()));
  const double n = static_cast<double>(selected.starts.size());
  state.counters["cgroups"] = n;
  if (reads) state.counters["bytes_per_cgroup"] = static_cast<double>(bytes) / n;
  state.counters["per_cgroup"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_FloorFile(benchmark::State& state, int file) {
  PathArena selected;
  floor_walk_all(selected);
  long bytes = 0;
  for (auto _ : state) {
    bytes = floor_reads(selected, file);
    benchmark::DoNotOptimize(bytes);
  }
  const double n = static_cast<double>(selected.starts.size());
  state.counters["bytes_per_cgroup"] = static_cast<double>(bytes) / n;
  state.counters["per_cgroup"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Every descriptor read from offset 0 until a short read, as CgroupFileCache and
// KernelFile::Reads::kOneRecord do: one pread per file here, all of them being under 4 KiB.
// Returns the bytes read.
long pread_all(const std::vector<int>& fds) {
  long bytes = 0;
  for (int fd : fds) {
    for (long total = 0;;) {
      const ssize_t n = ::pread(fd, g_read_buffer, sizeof g_read_buffer, total);
      if (n <= 0) break;
      total += n;
      bytes += n;
      if (static_cast<std::size_t>(n) < sizeof g_read_buffer) break;
    }
  }
  return bytes;
}

// The floor the source is held against: a bare C loop of pread()s on descriptors opened
// beforehand, of exactly the files one sample reads: usage, limit and the twin's
// memory.pressure of every cgroup, and the detail files (failcnt, memsw usage and limit,
// oom_control, memory.stat) of as many cgroups as the cap exports. No walk: the source walks
// only when the tree changed.
void BM_FloorSameReads(benchmark::State& state) {
  PathArena selected;
  floor_walk_all(selected);
  std::vector<int> fds;
  auto keep = [&fds](const char* path) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) fds.push_back(fd);
  };
  for (std::size_t i = 0; i < selected.starts.size(); ++i) {
    keep(floor_path(kV1Root, selected.at(i), "memory.usage_in_bytes"));
    keep(floor_path(kV1Root, selected.at(i), "memory.limit_in_bytes"));
    if (g_layout.twins) keep(floor_path(kV2Root, selected.at(i), kPsiFile));
    if (i >= kCap) continue;
    for (const char* name : {"memory.failcnt", "memory.memsw.usage_in_bytes", "memory.memsw.limit_in_bytes",
                             "memory.oom_control", "memory.stat"}) {
      keep(floor_path(kV1Root, selected.at(i), name));
    }
  }
  long bytes = 0;
  for (auto _ : state) {
    bytes = pread_all(fds);
    benchmark::DoNotOptimize(bytes);
  }
  for (int fd : fds) ::close(fd);
  const double n = static_cast<double>(selected.starts.size());
  state.counters["cgroups"] = n;
  state.counters["files"] = static_cast<double>(fds.size());
  state.counters["per_cgroup"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- Alternatives: not what the source does, what a reader could cost. ---

// The same files opened relative to a descriptor of the cgroup's directory (openat), so the
// kernel resolves one path component per file instead of the whole path. The directory
// descriptor replaces the first stat(), fstat() on it the second; the twin's memory.pressure
// is opened by its full path as before.
long alt_reads_dirfd(const PathArena& selected) {
  long bytes = 0;
  struct stat st{};
  for (std::size_t i = 0; i < selected.starts.size(); ++i) {
    const char* rel = selected.at(i);
    const int dir_fd = ::open(floor_path(kV1Root, rel, nullptr), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) continue;
    for (const char* name : kV1Files) {
      const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      for (ssize_t n; (n = ::read(fd, g_read_buffer, sizeof g_read_buffer)) > 0;) bytes += n;
      ::close(fd);
    }
    if (g_layout.twins) bytes += read_file_to_end(floor_path(kV2Root, rel, kPsiFile));
    ::fstat(dir_fd, &st);
    ::close(dir_fd);
  }
  return bytes;
}

void BM_AltReadsDirfd(benchmark::State& state) {
  PathArena selected;
  floor_walk_all(selected);
  long bytes = 0;
  for (auto _ : state) {
    bytes = alt_reads_dirfd(selected);
    benchmark::DoNotOptimize(bytes);
  }
  const double n = static_cast<double>(selected.starts.size());
  state.counters["cgroups"] = n;
  state.counters["bytes_per_cgroup"] = static_cast<double>(bytes) / n;
  state.counters["per_cgroup"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The same files opened once and re-read with pread() from offset 0 every iteration, as the
// node sources do with /proc files: only the reads are left. Needs one descriptor per file
// (9 per cgroup); if the descriptor limit runs out, fewer cgroups are counted.
void BM_AltReadsKeptOpen(benchmark::State& state) {
  PathArena selected;
  floor_walk_all(selected);
  std::vector<int> fds;
  std::size_t cgroups = 0;
  for (std::size_t i = 0; i < selected.starts.size(); ++i) {
    const std::size_t before = fds.size();
    bool complete = true;
    for (const char* name : kV1Files) {
      const int fd = ::open(floor_path(kV1Root, selected.at(i), name), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds.push_back(fd);
      complete = complete && fd >= 0;
    }
    if (g_layout.twins) {
      const int fd = ::open(floor_path(kV2Root, selected.at(i), kPsiFile), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds.push_back(fd);
      complete = complete && fd >= 0;
    }
    if (!complete) {  // out of descriptors: stop at whole cgroups
      for (std::size_t f = before; f < fds.size(); ++f) ::close(fds[f]);
      fds.resize(before);
      break;
    }
    ++cgroups;
  }
  long bytes = 0;
  for (auto _ : state) {
    bytes = pread_all(fds);
    benchmark::DoNotOptimize(bytes);
  }
  for (int fd : fds) ::close(fd);
  const double n = static_cast<double>(cgroups);
  state.counters["cgroups"] = n;
  state.counters["bytes_per_cgroup"] = n > 0 ? static_cast<double>(bytes) / n : 0;
  state.counters["per_cgroup"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- Rendering: what a scrape costs with the cgroup section at cap 500. ---

struct RenderFixture {
  memdiag::SnapshotStore store{1};
  memdiag::prom::SnapshotCollector collector{store, {"bench", "bench", "bench"}};
  std::size_t exported = 0, dropped = 0;

  explicit RenderFixture(bool with_cgroups) {
    std::vector<std::unique_ptr<memdiag::Source>> sources;
    sources.push_back(memdiag::make_source("meminfo", memdiag::KernelPaths{}));
    if (with_cgroups) sources.push_back(make_cgroup_source(kCap));
    auto snap = std::make_shared<memdiag::Snapshot>();
    snap->sequence = 1;
    snap->taken_at = std::chrono::system_clock::now();
    for (auto& s : sources) {
      if (!s) continue;
      memdiag::SourceStatus status;
      status.name = std::string(s->name());
      status.up = s->probe().ok() && s->sample(*snap).ok();
      snap->sources.push_back(std::move(status));
    }
    if (snap->cgroups) {
      exported = snap->cgroups->cgroups.size();
      dropped = snap->cgroups->dropped;
    }
    store.publish(std::move(snap));
  }
};

void BM_RenderText(benchmark::State& state, bool with_cgroups) {
  RenderFixture fixture(with_cgroups);
  if (with_cgroups && fixture.exported == 0) {
    state.SkipWithError("no cgroup section to render");
    return;
  }
  std::string body;
  for (auto _ : state) {
    body.clear();
    fixture.collector.render_text(body);
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(body.size());
  state.counters["samples"] = static_cast<double>(count_samples(body));
  state.counters["exported"] = static_cast<double>(fixture.exported);
  state.counters["dropped"] = static_cast<double>(fixture.dropped);
}

// --- Registration and the summary. ---

constexpr const char* kSample = "CgroupSample/cap:500";
constexpr const char* kSampleNoCap = "CgroupSample/cap:none";
constexpr const char* kSampleCold = "CgroupSample/after_sleep";
constexpr const char* kSampleTreeChanged = "CgroupSample/tree_changed";
constexpr const char* kSampleFirst = "CgroupSample/first";
constexpr const char* kFloorSame = "Floor/same_reads_kept_open";
constexpr const char* kDiscover = "Part/discover";
constexpr const char* kRead = "Part/read";
constexpr const char* kFloor = "Floor/walk+reads";
constexpr const char* kFloorWalk = "Floor/walk";
constexpr const char* kFloorReads = "Floor/reads";
constexpr const char* kAltDirfd = "Alt/reads_openat_dirfd";
constexpr const char* kAltKeptOpen = "Alt/reads_kept_open";
constexpr const char* kRender = "RenderText/cap:500";
constexpr const char* kRenderNode = "RenderText/meminfo_only";

std::vector<std::string> floor_file_names() {
  std::vector<std::string> names;
  for (const char* f : kV1Files) names.push_back(std::string("Floor/file:") + f);
  if (g_layout.twins) names.push_back(std::string("Floor/file:unified/") + kPsiFile);
  return names;
}

void register_benchmarks() {
  auto cpu = [](benchmark::internal::Benchmark* b) {
    return b->MeasureProcessCPUTime()->Unit(benchmark::kMicrosecond);
  };
  cpu(benchmark::RegisterBenchmark(kSample, BM_CgroupSample, kCap, Before::kNothing));
  cpu(benchmark::RegisterBenchmark(kSampleNoCap, BM_CgroupSample, std::numeric_limits<std::size_t>::max(),
                                   Before::kNothing));
  cpu(benchmark::RegisterBenchmark(kSampleCold, BM_CgroupSample, kCap, Before::kSleep))->Iterations(20);
  cpu(benchmark::RegisterBenchmark(kSampleTreeChanged, BM_CgroupSample, kCap, Before::kTreeChange))->Iterations(10);
  cpu(benchmark::RegisterBenchmark(kSampleFirst, BM_CgroupFirstSample))->Iterations(5);
  cpu(benchmark::RegisterBenchmark(kFloorSame, BM_FloorSameReads));
  cpu(benchmark::RegisterBenchmark(kDiscover, BM_PartDiscover));
  cpu(benchmark::RegisterBenchmark(kRead, BM_PartRead));
  cpu(benchmark::RegisterBenchmark(kFloor, BM_FloorAll, true, true));
  cpu(benchmark::RegisterBenchmark(kFloorWalk, BM_FloorAll, true, false));
  cpu(benchmark::RegisterBenchmark(kFloorReads, BM_FloorAll, false, true));
  const auto names = floor_file_names();
  for (std::size_t f = 0; f < names.size(); ++f) {
    cpu(benchmark::RegisterBenchmark(names[f].c_str(), BM_FloorFile, static_cast<int>(f)));
  }
  cpu(benchmark::RegisterBenchmark(kAltDirfd, BM_AltReadsDirfd));
  cpu(benchmark::RegisterBenchmark(kAltKeptOpen, BM_AltReadsKeptOpen));
  cpu(benchmark::RegisterBenchmark(kRender, BM_RenderText, true));
  cpu(benchmark::RegisterBenchmark(kRenderNode, BM_RenderText, false));
}

void print_summary(const RecordingReporter& recorded, std::ostream& out) {
  auto line = [&out](const std::string& what, const char* format, double value, const std::string& note) {
    if (value < 0) return;
    char number[64], text[300];
    std::snprintf(number, sizeof number, format, value);
    std::snprintf(text, sizeof text, "  %-46s %12s  %s\n", what.c_str(), number, note.c_str());
    out << text;
  };
  auto ratio = [](const char* label, double a, double b) {
    if (a < 0 || b <= 0) return std::string();
    char text[96];
    std::snprintf(text, sizeof text, "%s = %.2f", label, a / b);
    return std::string(text);
  };
  // CPU per cgroup: per iteration over the number of cgroups that benchmark went through.
  auto per_cgroup = [&recorded](const char* name) {
    const double us = recorded.cpu_us(name), n = recorded.counter(name, "cgroups");
    return us < 0 || n <= 0 ? -1.0 : us / n;
  };
  const double cgroups = recorded.counter(kSample, "cgroups");
  char head[300];
  std::snprintf(head, sizeof head,
                "\nsummary (process CPU; %zu cgroups created: 1 parent, %d groups, %d leaves; cgroup2 twins: %s):\n",
                g_layout.cgroups, (g_layout.leaves + g_layout.fanout - 1) / g_layout.fanout, g_layout.leaves,
                g_layout.twins ? "yes" : "no");
  out << head;
  const double sample = per_cgroup(kSample);
  const double floor = per_cgroup(kFloor);
  const double same = per_cgroup(kFloorSame);
  if (sample > 0) {
    line("cgroup sample per cgroup (cap 500)", "%.2f us", sample,
         std::string("target < 25 us: ") + (sample < kPerCgroupTargetUs ? "met" : "MISSED"));
    line("floor: the same preads, bare C", "%.2f us", same,
         ratio("sample / floor", sample, same) + " (" +
             std::to_string(static_cast<long>(recorded.counter(kFloorSame, "files"))) + " files)");
    line("cgroup sample, whole", "%.0f us", recorded.cpu_us(kSample),
         "(" + std::to_string(static_cast<long>(cgroups)) + " cgroups sampled)");
    line("cgroup sample per cgroup (no cap)", "%.2f us", per_cgroup(kSampleNoCap), "");
    line("cgroup sample per cgroup (after 10 ms sleep)", "%.2f us", per_cgroup(kSampleCold),
         "(cold caches, as in the daemon)");
    line("cgroup sample per cgroup (tree changed)", "%.2f us", per_cgroup(kSampleTreeChanged),
         "(a cgroup was created and removed: the sample walks the tree)");
    line("a new source's first sample, per cgroup", "%.2f us", per_cgroup(kSampleFirst),
         "(the walk, the watches, opening every kept file: once at start)");
  }
  line("naive reader (walk + open/read/close, bare C)", "%.2f us", floor, ratio("sample / naive", sample, floor));
  const double user_sample = recorded.counter(kSample, "user_us"), user_floor = recorded.counter(kFloor, "user_us");
  line("  of which user space: sample", "%.2f us", user_sample, "(getrusage; the rest is kernel time)");
  char user_note[96] = "";
  if (user_sample >= 0 && user_floor >= 0) {
    std::snprintf(user_note, sizeof user_note, "(sample - floor in user space: %.2f us)", user_sample - user_floor);
  }
  line("  of which user space: floor", "%.2f us", user_floor, user_note);
  line("  floor: walk only", "%.2f us", per_cgroup(kFloorWalk), "");
  line("  floor: reads only (9 files + 2 stat)", "%.2f us", per_cgroup(kFloorReads), "");
  line("source part: discover_cgroups", "%.2f us", per_cgroup(kDiscover),
       ratio("/ floor walk", per_cgroup(kDiscover), per_cgroup(kFloorWalk)));
  line("source part: CgroupReader::read", "%.2f us", per_cgroup(kRead),
       ratio("/ floor reads", per_cgroup(kRead), per_cgroup(kFloorReads)));
  for (const auto& name : floor_file_names()) {
    const double us = recorded.cpu_us(name), n = static_cast<double>(g_layout.cgroups);
    line("  " + name, "%.2f us", us < 0 ? -1 : us / n,
         "(" + std::to_string(static_cast<long>(recorded.counter(name, "bytes_per_cgroup"))) + " bytes)");
  }
  line("alternative: reads by openat(dir fd, name)", "%.2f us", per_cgroup(kAltDirfd),
       ratio("/ floor reads", per_cgroup(kAltDirfd), per_cgroup(kFloorReads)));
  line("alternative: reads on kept-open descriptors", "%.2f us", per_cgroup(kAltKeptOpen),
       ratio("/ floor reads", per_cgroup(kAltKeptOpen), per_cgroup(kFloorReads)) + " (" +
           std::to_string(static_cast<long>(recorded.counter(kAltKeptOpen, "cgroups"))) + " cgroups)");
  const double render = recorded.cpu_us(kRender);
  if (render > 0) {
    line("render_text at cap 500", "%.0f us", render,
         "(" + std::to_string(static_cast<long>(recorded.counter(kRender, "exported"))) + " cgroups exported, " +
             std::to_string(static_cast<long>(recorded.counter(kRender, "dropped"))) + " dropped)");
    line("scrape size at cap 500, bytes", "%.0f", recorded.counter(kRender, "bytes"), "");
    line("samples per scrape at cap 500", "%.0f", recorded.counter(kRender, "samples"), "");
    line("render_text meminfo only", "%.1f us", recorded.cpu_us(kRenderNode),
         std::to_string(static_cast<long>(recorded.counter(kRenderNode, "bytes"))) + " bytes, " +
             std::to_string(static_cast<long>(recorded.counter(kRenderNode, "samples"))) + " samples");
  }
  out.flush();
}

// Takes --name=N out of argv (Google Benchmark refuses flags it does not know).
bool take_int_flag(int& argc, char** argv, const char* name, int& value) {
  const std::size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) != 0 || argv[i][len] != '=') continue;
    char* end = nullptr;
    const long v = std::strtol(argv[i] + len + 1, &end, 10);
    if (end == argv[i] + len + 1 || *end != '\0' || v < 1 || v > 20000) {
      std::fprintf(stderr, "%s: expected a number from 1 to 20000\n", name);
      return false;
    }
    value = static_cast<int>(v);
    for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
    --argc;
    --i;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (!take_int_flag(argc, argv, "--cgroups", g_layout.leaves) || !take_int_flag(argc, argv, "--fanout", g_layout.fanout)) {
    return 2;
  }
  // Keep machine-readable output clean: the summary goes to stderr unless the table is for people.
  bool console = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--benchmark_format=", 19) == 0 && std::strcmp(argv[i] + 19, "console") != 0) {
      console = false;
    }
  }
  if (!console) g_info = stderr;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  if (::geteuid() != 0) {
    std::fprintf(g_info, "skipped: not root (memdiag-cgroup-bench creates cgroups under %s); nothing was measured\n", kV1Root);
    return 0;
  }
  if (::access((std::string(kV1Root) + "/memory.usage_in_bytes").c_str(), F_OK) != 0) {
    std::fprintf(g_info, "skipped: no cgroup v1 memory hierarchy at %s (a pure cgroup v2 host?); nothing was measured\n",
                kV1Root);
    return 0;
  }
  // As the daemon does at start: the cgroup reader keeps descriptors open within this budget.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  memdiag::test_support::install_exit_cleanup(rmdir_created_dirs, memdiag::test_support::OnSigpipe::kReleaseAndDie);
  remove_stale_parents();
  std::string why;
  bool refused_first = false;
  if (!create_tree(g_layout, why, refused_first)) {
    remove_tree_and_report();
    if (refused_first) {
      std::fprintf(g_info, "skipped: cannot create cgroups (%s); nothing was measured\n", why.c_str());
      return 0;
    }
    std::fprintf(stderr, "creating the cgroups failed: %s\n", why.c_str());
    return 1;
  }
  // The source must see exactly the cgroups created, in hybrid or v1 mode.
  {
    auto source = make_cgroup_source(kCap);
    memdiag::Snapshot snap;
    if (!source || !source->sample(snap) || !snap.cgroups || snap.cgroups->discovered != g_layout.cgroups) {
      std::fprintf(stderr, "the cgroup source does not see the %zu cgroups created (discovered %zu)\n", g_layout.cgroups,
                   snap.cgroups ? snap.cgroups->discovered : 0);
      remove_tree_and_report();
      return 1;
    }
    std::fprintf(g_info, "cgroup source mode: %.*s, %zu cgroups under %s%s\n", static_cast<int>(snap.cgroups->mode.size()),
                snap.cgroups->mode.data(), snap.cgroups->discovered, kV1Root, g_layout.relative.c_str());
    if (snap.cgroups->malformed_files > 0) {
      std::fprintf(g_info, "note: %zu unreadable cgroup files, first: %s\n", snap.cgroups->malformed_files,
                  snap.cgroups->first_malformed.c_str());
    }
    std::fflush(g_info);
  }

  register_benchmarks();
  RecordingReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter, console ? std::cout : std::cerr);
  benchmark::Shutdown();
  std::cout.flush();
  return remove_tree_and_report() ? 0 : 1;
}
