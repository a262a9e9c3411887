// SPDX-License-Identifier: Apache-2.0
// memdiag's size-class allocator (probes/canary) against glibc, jemalloc, mimalloc and
// tcmalloc on the workloads of a reference machine's allocator table, side by side in one run.
//
//   memdiag-alloc-bench [--all]                       every allocator x every workload
//   memdiag-alloc-bench --allocator A[,B...] --workload W[,V...] [--repetitions N] [--quick] [--json]
//
// Allocators: memdiag (memdiag::alloc::SizeClassAllocator, one instance, default options; ort
// with process_ceiling_bytes = 8 GiB), glibc (plain malloc/free), jemalloc, mimalloc, tcmalloc
// (Debian's shared libraries through LD_PRELOAD, plain malloc/free). Workloads:
//
//   churn    live set of 10k objects of 16..1024 B (uniform), 10M x (free a random slot, malloc
//            into it): ns per free+malloc pair, peak RSS (VmHWM). Sizes and slots come from
//            tables filled before timing (not malloc'ed), so RNG cost is not timed.
//   churn2   the same in two threads at once (each its own live set and tables): ns/op per
//            thread (mean of the two; ns_per_op_max the slower one).
//   ort      5,000 x (allocate 2 MiB, touch every 4 KiB page, free): ns per cycle, peak RSS,
//            failures (null returns).
//   zig      200,000 x (allocate 8 KiB, touch both pages); maps_before = lines of
//            /proc/self/maps; free every second block; malloc(1) and malloc(1 MiB);
//            maps_after; failures. ns_per_op = ns per free of the free phase.
//   release  1 GiB in 64 KiB blocks, touched, all freed, 1 s asleep with no call:
//            returned_fraction_1s = (RSS allocated - RSS after 1 s) / (RSS allocated - RSS
//            before). ns_per_op = ns per free. memdiag only: a second round, then the time of
//            release_unused() right after the frees: release_ms_per_gib; the kernel's floor
//            in the same process, one madvise(MADV_DONTNEED) of as many touched 4 KiB pages:
//            madvise_floor_ms_per_gib; and release_unused() of an instance with the
//            transparent_huge_pages option: release_ms_per_gib_thp.
//   fault    64 MiB in 2 MiB blocks, each 4 KiB page touched once, each touch timed with
//            clock_gettime: fault_p50_ns, fault_p99_ns (ns_per_op = the median). Informational.
//
// Every (allocator, workload) runs in a fresh child process (this binary re-executed with the
// internal flag --child, LD_PRELOAD set for the preloaded allocators), so peak RSS and mappings
// belong to that allocator alone. The child checks that the allocator asked for is the one
// malloc resolves to and fails loudly otherwise. Repetitions alternate the allocators' order.
// The timed loops are one template over an allocator policy, identical except for the call.
//
// Output: one JSON object per line per run (with "repetition") and, with more than one
// repetition, one per combination with "aggregate":"median"; then a summary table (figures,
// memdiag / other ratios, targets met/MISSED) on stdout, or on stderr with --json or when a single
// (allocator, workload) runs. Allocators
// not on the machine are reported "not installed" and are not an error. Exit status: 0 when
// every run that could run ran (targets are never judged by the exit status), 1 when a child
// failed, 2 on a usage error.
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#ifdef MEMDIAG_HAVE_ALLOC
#include "probes/canary/size_class_allocator.hpp"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define MEMDIAG_BENCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMDIAG_BENCH_SANITIZED 1
#endif
#endif

extern char** environ;

namespace {

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr std::size_t GiB = 1024 * MiB;
constexpr std::size_t kPage = 4096;

const std::vector<std::string> kAllocators = {"memdiag", "glibc", "jemalloc", "mimalloc", "tcmalloc"};
const std::vector<std::string> kWorkloads = {"churn", "churn2", "ort", "zig", "release", "fault"};

// ---------------------------------------------------------------------------------------------
// Small tools that never call malloc (the child's figures must belong to the allocator only).

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Arrays of the benchmark's own bookkeeping: mmap'ed, so no allocator under test serves them.
template <class T>
T* map_array(std::size_t n) {
  void* p = mmap(nullptr, std::max<std::size_t>(n * sizeof(T), 1), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("memdiag-alloc-bench: mmap");
    std::_Exit(3);
  }
  return static_cast<T*>(p);
}
template <class T>
void unmap_array(T* p, std::size_t n) {
  munmap(p, std::max<std::size_t>(n * sizeof(T), 1));
}

// Reads a small /proc file into a static buffer; returns its length (0 on error).
std::size_t read_proc(const char* path, char* buf, std::size_t cap) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t len = 0;
  while (len + 1 < cap) {
    const ssize_t n = read(fd, buf + len, cap - 1 - len);
    if (n <= 0) break;
    len += static_cast<std::size_t>(n);
  }
  close(fd);
  buf[len] = '\0';
  return len;
}

// A "Name:   123 kB" field of /proc/self/status, in bytes.
std::size_t status_bytes(const char* field) {
  static char buf[8192];
  if (read_proc("/proc/self/status", buf, sizeof buf) == 0) return 0;
  const std::size_t flen = std::strlen(field);
  for (const char* line = buf; *line != '\0';) {
    if (std::strncmp(line, field, flen) == 0 && line[flen] == ':') {
      return static_cast<std::size_t>(std::strtoull(line + flen + 1, nullptr, 10)) * KiB;
    }
    const char* nl = std::strchr(line, '\n');
    if (nl == nullptr) break;
    line = nl + 1;
  }
  return 0;
}
std::size_t rss_bytes() { return status_bytes("VmRSS"); }
std::size_t peak_rss() { return status_bytes("VmHWM"); }

// Lines of /proc/self/maps.
std::size_t count_maps() {
  static char buf[64 * 1024];
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t lines = 0;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    lines += static_cast<std::size_t>(std::count(buf, buf + n, '\n'));
  }
  close(fd);
  return lines;
}

// A write the compiler must keep, and a pointer it must consider used: GCC knows malloc/free
// and would otherwise drop stores to memory freed right after, or whole malloc/free pairs.
inline void touch(void* p, std::size_t offset, unsigned char v = 1) {
  *(static_cast<volatile unsigned char*>(p) + offset) = v;
}
inline void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// One JSON line: ordered keys, values already rendered.

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct JsonLine {
  std::vector<std::pair<std::string, std::string>> kv;
  void raw(const std::string& k, const std::string& v) {
    for (auto& e : kv) {
      if (e.first == k) {
        e.second = v;
        return;
      }
    }
    kv.emplace_back(k, v);
  }
  void num(const std::string& k, double v) { raw(k, json_number(v)); }
  void str(const std::string& k, const std::string& v) { raw(k, json_string(v)); }
  void null(const std::string& k) { raw(k, "null"); }
  std::string text() const {
    std::string out = "{";
    for (std::size_t i = 0; i < kv.size(); ++i) {
      if (i > 0) out += ",";
      out += json_string(kv[i].first) + ":" + kv[i].second;
    }
    return out + "}";
  }
};

// The keys every line carries (null where the workload does not define them), in this order.
const char* const kCoreKeys[] = {"ns_per_op",       "peak_rss_bytes",       "failures", "maps_before",
                                 "maps_after",      "rss_after_bytes",      "returned_fraction_1s"};

// A flat JSON object as the child prints it: string, number, true/false and null values.
struct Value {
  enum Kind { kNull, kNumber, kString, kBool } kind = kNull;
  double number = 0;
  std::string text;  // kString: the string; otherwise the raw token
};
using Object = std::vector<std::pair<std::string, Value>>;

const Value* find(const Object& o, const std::string& key) {
  for (const auto& [k, v] : o) {
    if (k == key) return &v;
  }
  return nullptr;
}
std::optional<double> number(const Object& o, const std::string& key) {
  const Value* v = find(o, key);
  if (v == nullptr || v->kind != Value::kNumber) return std::nullopt;
  return v->number;
}

bool parse_flat_json(const std::string& s, Object& out) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto str = [&](std::string& v) {
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\' && i + 1 < s.size()) {
        ++i;
        if (s[i] == 'u' && i + 4 < s.size()) {
          v += static_cast<char>(std::strtol(s.substr(i + 1, 4).c_str(), nullptr, 16));
          i += 5;
          continue;
        }
        v += s[i] == 'n' ? '\n' : s[i] == 't' ? '\t' : s[i];
        ++i;
        continue;
      }
      v += s[i++];
    }
    if (i >= s.size()) return false;
    ++i;
    return true;
  };
  ws();
  if (i >= s.size() || s[i] != '{') return false;
  ++i;
  ws();
  if (i < s.size() && s[i] == '}') return true;
  for (;;) {
    ws();
    std::string key;
    if (!str(key)) return false;
    ws();
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
    ws();
    Value v;
    if (i < s.size() && s[i] == '"') {
      v.kind = Value::kString;
      if (!str(v.text)) return false;
    } else if (s.compare(i, 4, "null") == 0) {
      v.kind = Value::kNull;
      i += 4;
    } else if (s.compare(i, 4, "true") == 0 || s.compare(i, 5, "false") == 0) {
      v.kind = Value::kBool;
      v.text = s[i] == 't' ? "true" : "false";
      v.number = s[i] == 't' ? 1 : 0;
      i += s[i] == 't' ? 4 : 5;
    } else {
      const char* begin = s.c_str() + i;
      char* end = nullptr;
      v.number = std::strtod(begin, &end);
      if (end == begin) return false;
      v.kind = Value::kNumber;
      v.text.assign(begin, static_cast<std::size_t>(end - begin));
      i += static_cast<std::size_t>(end - begin);
    }
    out.emplace_back(std::move(key), std::move(v));
    ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') {
      ++i;
      ws();
      return i == s.size();
    }
    return false;
  }
}

std::string render_value(const Value& v) {
  switch (v.kind) {
    case Value::kNull: return "null";
    case Value::kString: return json_string(v.text);
    default: return v.text;
  }
}

// ---------------------------------------------------------------------------------------------
// The allocator policies: the timed loops below are the same code for all; only these differ.

struct MallocPolicy {  // glibc, or whatever LD_PRELOAD put in front of it
  static void* allocate(std::size_t n) noexcept { return std::malloc(n); }
  static void deallocate(void* p) noexcept { std::free(p); }
};

#ifdef MEMDIAG_HAVE_ALLOC
memdiag::alloc::SizeClassAllocator* g_memdiag = nullptr;
struct MemdiagPolicy {
  static void* allocate(std::size_t n) noexcept { return g_memdiag->allocate(n); }
  static void deallocate(void* p) noexcept { g_memdiag->deallocate(p); }
};
#endif

struct Params {
  bool quick = false;
  std::uint64_t churn_ops = 10'000'000;
  std::uint64_t ort_cycles = 5'000;
  std::size_t zig_blocks = 200'000;
  std::size_t release_bytes = 1 * GiB;
  std::size_t fault_bytes = 64 * MiB;
  void make_quick() {
    quick = true;
    churn_ops = 100'000;
    ort_cycles = 100;
    zig_blocks = 200;
    release_bytes = 64 * MiB;
    fault_bytes = 16 * MiB;
  }
};

// --- churn / churn2 -------------------------------------------------------------------------

constexpr std::size_t kLive = 10'000;
constexpr std::size_t kSlotTable = 65'536;
constexpr std::size_t kSizeTable = 65'521;  // prime: (slot, size) pairs repeat after ~4.3e9 ops

struct ChurnTables {
  std::uint16_t* slot = nullptr;
  std::uint16_t* size = nullptr;
  explicit ChurnTables(std::uint64_t seed) {
    slot = map_array<std::uint16_t>(kSlotTable);
    size = map_array<std::uint16_t>(kSizeTable);
    for (std::size_t i = 0; i < kSlotTable; ++i) {
      slot[i] = static_cast<std::uint16_t>(((splitmix64(seed) >> 32) * kLive) >> 32);
    }
    for (std::size_t i = 0; i < kSizeTable; ++i) {
      size[i] = static_cast<std::uint16_t>(16 + (((splitmix64(seed) >> 32) * 1009) >> 32));  // 16..1024
    }
  }
  ~ChurnTables() {
    unmap_array(slot, kSlotTable);
    unmap_array(size, kSizeTable);
  }
  ChurnTables(const ChurnTables&) = delete;
  ChurnTables& operator=(const ChurnTables&) = delete;
};

struct ChurnResult {
  double ns_per_op = 0;
  std::uint64_t failures = 0;
};

// Fill the live set, wait for the other threads (if any), then time `ops` free+malloc pairs.
template <class P>
ChurnResult churn_loop(const ChurnTables& t, std::uint64_t ops, std::atomic<int>* barrier,
                       int parties, std::size_t* peak) {
  void** slots = map_array<void*>(kLive);
  ChurnResult r;
  for (std::size_t i = 0; i < kLive; ++i) {
    void* p = P::allocate(t.size[i % kSizeTable]);
    if (p == nullptr) {
      ++r.failures;
    } else {
      touch(p, 0);
    }
    slots[i] = p;
  }
  if (barrier != nullptr) {
    barrier->fetch_add(1);
    while (barrier->load() < parties) {
    }
  }
  std::size_t si = 0;
  std::size_t zi = kLive % kSizeTable;
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t op = 0; op < ops; ++op) {
    const std::size_t s = t.slot[si];
    if (++si == kSlotTable) si = 0;
    const std::size_t z = t.size[zi];
    if (++zi == kSizeTable) zi = 0;
    P::deallocate(slots[s]);
    void* p = P::allocate(z);
    if (p == nullptr) [[unlikely]] {
      ++r.failures;
    } else {
      touch(p, 0, static_cast<unsigned char>(op));
    }
    slots[s] = p;
  }
  const std::uint64_t t1 = now_ns();
  r.ns_per_op = static_cast<double>(t1 - t0) / static_cast<double>(ops);
  if (peak != nullptr) *peak = peak_rss();
  for (std::size_t i = 0; i < kLive; ++i) P::deallocate(slots[i]);
  unmap_array(slots, kLive);
  return r;
}

template <class P>
void run_churn(JsonLine& j, const Params& prm) {
  ChurnTables t(0x6d656d64696167ull);
  j.num("rss_baseline_bytes", static_cast<double>(rss_bytes()));
  std::size_t peak = 0;
  const ChurnResult r = churn_loop<P>(t, prm.churn_ops, nullptr, 1, &peak);
  j.num("ns_per_op", r.ns_per_op);
  j.num("peak_rss_bytes", static_cast<double>(peak));
  j.num("failures", static_cast<double>(r.failures));
  j.num("rss_after_bytes", static_cast<double>(rss_bytes()));
  j.num("ops", static_cast<double>(prm.churn_ops));
  j.num("live_objects", kLive);
}

template <class P>
void run_churn2(JsonLine& j, const Params& prm) {
  ChurnTables t0(0x6d656d64696167ull);
  ChurnTables t1(0x616c6c6f63ull);
  j.num("rss_baseline_bytes", static_cast<double>(rss_bytes()));
  std::atomic<int> barrier{0};
  ChurnResult r0;
  ChurnResult r1;
  std::thread other([&] { r1 = churn_loop<P>(t1, prm.churn_ops, &barrier, 2, nullptr); });
  r0 = churn_loop<P>(t0, prm.churn_ops, &barrier, 2, nullptr);
  other.join();
  j.num("ns_per_op", (r0.ns_per_op + r1.ns_per_op) / 2);
  j.num("peak_rss_bytes", static_cast<double>(peak_rss()));
  j.num("failures", static_cast<double>(r0.failures + r1.failures));
  j.num("rss_after_bytes", static_cast<double>(rss_bytes()));
  j.num("ns_per_op_max", std::max(r0.ns_per_op, r1.ns_per_op));
  j.num("threads", 2);
  j.num("ops", static_cast<double>(prm.churn_ops));
  j.num("live_objects", kLive);
}

// --- ort --------------------------------------------------------------------------------------

template <class P>
void run_ort(JsonLine& j, const Params& prm) {
  constexpr std::size_t kBlock = 2 * MiB;
  j.num("rss_baseline_bytes", static_cast<double>(rss_bytes()));
  std::uint64_t failures = 0;
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t c = 0; c < prm.ort_cycles; ++c) {
    void* p = P::allocate(kBlock);
    if (p == nullptr) {
      ++failures;
      continue;
    }
    for (std::size_t off = 0; off < kBlock; off += kPage) touch(p, off);
    escape(p);
    P::deallocate(p);
  }
  const std::uint64_t t1 = now_ns();
  j.num("ns_per_op", static_cast<double>(t1 - t0) / static_cast<double>(prm.ort_cycles));
  j.num("peak_rss_bytes", static_cast<double>(peak_rss()));
  j.num("failures", static_cast<double>(failures));
  j.num("rss_after_bytes", static_cast<double>(rss_bytes()));
  j.num("ops", static_cast<double>(prm.ort_cycles));
}

// --- zig --------------------------------------------------------------------------------------

template <class P>
void run_zig(JsonLine& j, const Params& prm) {
  constexpr std::size_t kBlock = 8 * KiB;
  const std::size_t n = prm.zig_blocks;
  void** blocks = map_array<void*>(n);
  j.num("rss_baseline_bytes", static_cast<double>(rss_bytes()));
  const std::size_t maps_start = count_maps();
  std::uint64_t failures = 0;
  const std::uint64_t t0 = now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    void* p = P::allocate(kBlock);
    if (p == nullptr) {
      ++failures;
    } else {
      touch(p, 0);
      touch(p, kPage);
    }
    blocks[i] = p;
  }
  const std::uint64_t t1 = now_ns();
  const std::size_t maps_before = count_maps();
  const std::uint64_t t2 = now_ns();
  std::size_t freed = 0;
  for (std::size_t i = 1; i < n; i += 2) {
    P::deallocate(blocks[i]);
    blocks[i] = nullptr;
    ++freed;
  }
  const std::uint64_t t3 = now_ns();
  void* one = P::allocate(1);
  void* big = P::allocate(1 * MiB);
  if (one == nullptr) ++failures; else touch(one, 0);
  if (big == nullptr) ++failures; else touch(big, 0);
  const std::size_t maps_after = count_maps();
  j.num("ns_per_op", freed > 0 ? static_cast<double>(t3 - t2) / static_cast<double>(freed) : NAN);
  j.num("peak_rss_bytes", static_cast<double>(peak_rss()));
  j.num("failures", static_cast<double>(failures));
  j.num("maps_before", static_cast<double>(maps_before));
  j.num("maps_after", static_cast<double>(maps_after));
  j.num("rss_after_bytes", static_cast<double>(rss_bytes()));
  j.num("new_mappings", static_cast<double>(maps_after) - static_cast<double>(maps_before));
  j.num("maps_at_start", static_cast<double>(maps_start));
  j.num("alloc_ns_per_block", static_cast<double>(t1 - t0) / static_cast<double>(n));
  j.num("ops", static_cast<double>(n));
  escape(one);
  escape(big);
  P::deallocate(one);
  P::deallocate(big);
  for (std::size_t i = 0; i < n; i += 2) P::deallocate(blocks[i]);
  unmap_array(blocks, n);
}

// --- release ----------------------------------------------------------------------------------

template <class P>
std::uint64_t allocate_touch_all(void** blocks, std::size_t n, std::size_t block) {
  std::uint64_t failures = 0;
  for (std::size_t i = 0; i < n; ++i) {
    void* p = P::allocate(block);
    if (p == nullptr) {
      ++failures;
    } else {
      for (std::size_t off = 0; off < block; off += kPage) touch(p, off);
    }
    blocks[i] = p;
  }
  return failures;
}

#ifdef MEMDIAG_HAVE_ALLOC
// ms per GiB for the kernel to take back `bytes` of touched anonymous 4 KiB pages in one call.
double madvise_floor_ms_per_gib(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NAN;
  madvise(p, bytes, MADV_NOHUGEPAGE);
  for (std::size_t off = 0; off < bytes; off += kPage) touch(p, off);
  const std::uint64_t t0 = now_ns();
  const int rc = madvise(p, bytes, MADV_DONTNEED);
  const std::uint64_t t1 = now_ns();
  munmap(p, bytes);
  if (rc != 0) return NAN;
  return static_cast<double>(t1 - t0) / 1e6 * static_cast<double>(GiB) / static_cast<double>(bytes);
}
#endif

template <class P>
void run_release(JsonLine& j, const Params& prm, bool is_memdiag) {
  constexpr std::size_t kBlock = 64 * KiB;
  const std::size_t n = prm.release_bytes / kBlock;
  void** blocks = map_array<void*>(n);
  const std::size_t rss0 = rss_bytes();
  std::uint64_t failures = allocate_touch_all<P>(blocks, n, kBlock);
  const std::size_t rss1 = rss_bytes();
  const std::uint64_t t0 = now_ns();
  for (std::size_t i = 0; i < n; ++i) P::deallocate(blocks[i]);
  const std::uint64_t t1 = now_ns();
  const std::size_t rss_freed = rss_bytes();
  timespec one_second{1, 0};
  while (nanosleep(&one_second, &one_second) != 0 && errno == EINTR) {
  }
  const std::size_t rss2 = rss_bytes();
  j.num("ns_per_op", static_cast<double>(t1 - t0) / static_cast<double>(n));
  j.num("peak_rss_bytes", static_cast<double>(peak_rss()));
  j.num("rss_after_bytes", static_cast<double>(rss2));
  j.num("returned_fraction_1s",
        rss1 > rss0 ? (static_cast<double>(rss1) - static_cast<double>(rss2)) /
                          (static_cast<double>(rss1) - static_cast<double>(rss0))
                    : NAN);
  j.num("rss_before_bytes", static_cast<double>(rss0));
  j.num("rss_allocated_bytes", static_cast<double>(rss1));
  j.num("rss_right_after_free_bytes", static_cast<double>(rss_freed));
  j.num("bytes", static_cast<double>(n * kBlock));
  j.num("ops", static_cast<double>(n));
#ifdef MEMDIAG_HAVE_ALLOC
  if (is_memdiag) {
    // A second round, then the explicit release right after the frees.
    failures += allocate_touch_all<P>(blocks, n, kBlock);
    for (std::size_t i = 0; i < n; ++i) P::deallocate(blocks[i]);
    const std::uint64_t t2 = now_ns();
    const std::size_t released = g_memdiag->release_unused();
    const std::uint64_t t3 = now_ns();
    const double ms = static_cast<double>(t3 - t2) / 1e6;
    j.num("release_unused_ms", ms);
    j.num("release_unused_bytes", static_cast<double>(released));
    j.num("release_ms_per_gib",
          released > 0 ? ms * static_cast<double>(GiB) / static_cast<double>(released) : NAN);
    // The kernel's floor, side by side: one madvise(MADV_DONTNEED) of as many touched 4 KiB
    // pages (THP off, as the allocator's heap), and the allocator with its THP option on.
    j.num("madvise_floor_ms_per_gib", madvise_floor_ms_per_gib(n * kBlock));
    {
      memdiag::alloc::AllocatorOptions o;
      o.transparent_huge_pages = true;
      o.background_decay = false;
      memdiag::alloc::SizeClassAllocator thp(o);
      std::uint64_t thp_failures = 0;
      for (std::size_t i = 0; i < n; ++i) {
        blocks[i] = thp.allocate(kBlock);
        if (blocks[i] == nullptr) {
          ++thp_failures;
          continue;
        }
        for (std::size_t off = 0; off < kBlock; off += kPage) touch(blocks[i], off);
      }
      for (std::size_t i = 0; i < n; ++i) thp.deallocate(blocks[i]);
      const std::uint64_t t4 = now_ns();
      const std::size_t thp_released = thp.release_unused();
      const std::uint64_t t5 = now_ns();
      failures += thp_failures;
      j.num("release_ms_per_gib_thp", thp_released > 0 ? static_cast<double>(t5 - t4) / 1e6 *
                                                             static_cast<double>(GiB) /
                                                             static_cast<double>(thp_released)
                                                       : NAN);
    }
  }
#else
  (void)is_memdiag;
#endif
  j.num("failures", static_cast<double>(failures));
  unmap_array(blocks, n);
}

// --- fault ------------------------------------------------------------------------------------

template <class P>
void run_fault(JsonLine& j, const Params& prm) {
  constexpr std::size_t kBlock = 2 * MiB;
  const std::size_t nblocks = prm.fault_bytes / kBlock;
  const std::size_t pages = prm.fault_bytes / kPage;
  auto* lat = map_array<std::uint32_t>(pages);
  void** blocks = map_array<void*>(nblocks);
  // What a timed touch of a resident page costs (two clock reads around a store).
  {
    std::uint32_t overhead[1001];
    for (auto& o : overhead) {
      const std::uint64_t a = now_ns();
      touch(overhead, 0);
      o = static_cast<std::uint32_t>(now_ns() - a);
    }
    std::sort(std::begin(overhead), std::end(overhead));
    j.num("clock_overhead_ns", overhead[500]);
  }
  j.num("rss_baseline_bytes", static_cast<double>(rss_bytes()));
  std::uint64_t failures = 0;
  std::size_t k = 0;
  for (std::size_t b = 0; b < nblocks; ++b) {
    void* p = P::allocate(kBlock);
    blocks[b] = p;
    if (p == nullptr) {
      ++failures;
      continue;
    }
    for (std::size_t off = 0; off < kBlock; off += kPage) {
      const std::uint64_t a = now_ns();
      touch(p, off);
      const std::uint64_t c = now_ns();
      lat[k++] = static_cast<std::uint32_t>(std::min<std::uint64_t>(c - a, UINT32_MAX));
    }
  }
  j.num("peak_rss_bytes", static_cast<double>(peak_rss()));
  j.num("rss_after_bytes", static_cast<double>(rss_bytes()));
  for (std::size_t b = 0; b < nblocks; ++b) {
    escape(blocks[b]);
    P::deallocate(blocks[b]);
  }
  if (k > 0) {
    double sum = 0;
    for (std::size_t i = 0; i < k; ++i) sum += lat[i];
    std::sort(lat, lat + k);
    j.num("ns_per_op", lat[k / 2]);
    j.num("fault_p50_ns", lat[k / 2]);
    j.num("fault_p99_ns", lat[std::min(k - 1, k * 99 / 100)]);
    j.num("fault_max_ns", lat[k - 1]);
    j.num("fault_mean_ns", sum / static_cast<double>(k));
  }
  j.num("failures", static_cast<double>(failures));
  j.num("pages", static_cast<double>(k));
  unmap_array(lat, pages);
  unmap_array(blocks, nblocks);
}

template <class P>
void run_workload(const std::string& w, JsonLine& j, const Params& prm, bool is_memdiag) {
  if (w == "churn") run_churn<P>(j, prm);
  else if (w == "churn2") run_churn2<P>(j, prm);
  else if (w == "ort") run_ort<P>(j, prm);
  else if (w == "zig") run_zig<P>(j, prm);
  else if (w == "release") run_release<P>(j, prm, is_memdiag);
  else if (w == "fault") run_fault<P>(j, prm);
}

// ---------------------------------------------------------------------------------------------
// The child: checks the allocator in front of malloc, runs one workload, prints one line.

struct Identity {
  std::string library;  // where malloc resolves
  std::string version;
};

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Which library malloc() resolves to, and whether it is the one asked for.
bool check_active(const std::string& allocator, Identity& id, std::string& why) {
  void* m = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info{};
  if (m == nullptr || dladdr(m, &info) == 0 || info.dli_fname == nullptr) {
    why = "cannot tell where malloc resolves";
    return false;
  }
  id.library = info.dli_fname;
  const bool has_je = dlsym(RTLD_DEFAULT, "mallctl") != nullptr;
  const bool has_mi = dlsym(RTLD_DEFAULT, "mi_version") != nullptr;
  const bool has_tc = dlsym(RTLD_DEFAULT, "tc_malloc") != nullptr ||
                      dlsym(RTLD_DEFAULT, "MallocExtension_Internal_GetStats") != nullptr;
  if (allocator == "jemalloc") {
    if (!has_je || !contains(id.library, "jemalloc")) {
      why = "jemalloc is not active (no mallctl, or malloc resolves to " + id.library + ")";
      return false;
    }
    using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
    auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
    const char* v = nullptr;
    std::size_t len = sizeof v;
    if (mallctl("version", &v, &len, nullptr, 0) == 0 && v != nullptr) id.version = v;
  } else if (allocator == "mimalloc") {
    if (!has_mi || !contains(id.library, "mimalloc")) {
      why = "mimalloc is not active (no mi_version, or malloc resolves to " + id.library + ")";
      return false;
    }
    auto mi_version = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "mi_version"));
    const int v = mi_version();
    id.version = std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
  } else if (allocator == "tcmalloc") {
    if (!has_tc || !contains(id.library, "tcmalloc")) {
      why = "tcmalloc is not active (no tc_malloc, or malloc resolves to " + id.library + ")";
      return false;
    }
    using TcVersion = const char* (*)(int*, int*, const char**);
    if (auto tc_version = reinterpret_cast<TcVersion>(dlsym(RTLD_DEFAULT, "tc_version"))) {
      int major = 0;
      int minor = 0;
      const char* patch = nullptr;
      if (const char* s = tc_version(&major, &minor, &patch)) id.version = s;
    }
  } else {  // glibc, memdiag: plain glibc must be behind malloc
    if (has_je || has_mi || has_tc || !contains(id.library, "libc.so")) {
      why = "malloc does not resolve to glibc but to " + id.library;
      return false;
    }
    id.version = gnu_get_libc_version();
  }
  return true;
}

int child_main(const std::string& allocator, const std::string& workload, const Params& prm) {
  alarm(1800);  // a hung run must not hang the comparison forever
  Identity id;
  std::string why;
  if (!check_active(allocator, id, why)) {
    std::fprintf(stderr, "memdiag-alloc-bench: child for %s/%s: %s (LD_PRELOAD=%s)\n", allocator.c_str(),
                 workload.c_str(), why.c_str(), std::getenv("LD_PRELOAD") ? std::getenv("LD_PRELOAD") : "");
    return 3;
  }
  JsonLine j;
  j.str("workload", workload);
  j.str("allocator", allocator);
  j.str("status", "ok");
  for (const char* k : kCoreKeys) j.null(k);
  j.str("library", id.library);
  if (!id.version.empty()) j.str("version", id.version);
  j.raw("quick", prm.quick ? "true" : "false");
  if (allocator == "memdiag") {
#ifdef MEMDIAG_HAVE_ALLOC
    memdiag::alloc::AllocatorOptions options;
    if (workload == "ort") options.process_ceiling_bytes = 8 * GiB;
    memdiag::alloc::SizeClassAllocator instance(options);
    g_memdiag = &instance;
    run_workload<MemdiagPolicy>(workload, j, prm, true);
    const memdiag::alloc::AllocatorStats st = instance.stats();
    j.num("memdiag_held_bytes", static_cast<double>(st.held_bytes));
    j.num("memdiag_live_bytes", static_cast<double>(st.live_bytes));
    j.num("memdiag_reserved_bytes", static_cast<double>(st.reserved_bytes));
    j.num("memdiag_released_bytes_total", static_cast<double>(st.released_bytes_total));
    j.num("memdiag_mappings", static_cast<double>(st.mappings));
    j.num("memdiag_ceiling_hits_total", static_cast<double>(st.ceiling_hits_total));
    j.num("memdiag_failed_allocations_total", static_cast<double>(st.failed_allocations_total));
    g_memdiag = nullptr;
#else
    std::fprintf(stderr, "memdiag-alloc-bench: built without memdiag_alloc\n");
    return 3;
#endif
  } else {
    run_workload<MallocPolicy>(workload, j, prm, false);
  }
  const std::string line = j.text() + "\n";
  if (write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return 3;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The driver: one fresh child per run, then medians, ratios and verdicts.

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<std::size_t>(n));
}

// The shared library to preload for an allocator; "" = none found.
std::string preload_library(const std::string& allocator) {
  std::vector<std::string> names;
  if (allocator == "jemalloc") names = {"libjemalloc.so.2"};
  if (allocator == "mimalloc") names = {"libmimalloc.so.2", "libmimalloc.so.2.0"};
  if (allocator == "tcmalloc") names = {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"};
  const char* dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                        "/usr/lib", "/usr/local/lib"};
  for (const auto& name : names) {
    for (const char* dir : dirs) {
      const std::string path = std::string(dir) + "/" + name;
      if (access(path.c_str(), R_OK) == 0) return path;
    }
  }
  return "";
}

struct ChildOutcome {
  bool ok = false;
  std::string line;   // the child's JSON line
  std::string error;  // when !ok
};

ChildOutcome run_child(const std::string& exe, const std::string& allocator, const std::string& workload,
                       const std::string& preload, bool quick) {
  std::vector<std::string> args = {exe, "--child", "--allocator", allocator, "--workload", workload};
  if (quick) args.push_back("--quick");
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.emplace_back(*e);
  }
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  ChildOutcome out;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    out.error = std::string("child killed by signal ") + strsignal(WTERMSIG(status));
    return out;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.error = "child exited with status " + std::to_string(WEXITSTATUS(status)) + " (see stderr)";
    return out;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.find('\n') != std::string::npos || text.empty() || text.front() != '{') {
    out.error = "child printed no single JSON line";
    return out;
  }
  out.ok = true;
  out.line = text;
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Medians over the repetitions of one combination: numbers are medianed (when every repetition
// has them), everything else is taken from the first repetition.
Object median_object(const std::vector<Object>& reps) {
  Object out = reps.front();
  for (auto& [key, value] : out) {
    if (value.kind != Value::kNumber) continue;
    std::vector<double> xs;
    for (const auto& r : reps) {
      if (auto x = number(r, key)) xs.push_back(*x);
    }
    if (xs.size() != reps.size()) continue;
    value.number = median(xs);
    value.text = json_number(value.number);
  }
  return out;
}

std::string object_line(const Object& o, const std::vector<std::pair<std::string, std::string>>& front) {
  JsonLine j;
  bool inserted = false;
  for (const auto& [k, v] : o) {
    j.raw(k, render_value(v));
    if (k == "allocator" && !inserted) {
      for (const auto& [fk, fv] : front) j.raw(fk, fv);
      inserted = true;
    }
  }
  if (!inserted) {
    for (const auto& [fk, fv] : front) j.raw(fk, fv);
  }
  return j.text();
}

struct Combo {
  std::string status = "pending";  // ok | not installed | not built | not measured | error
  std::string error;
  std::vector<Object> reps;
  Object med;
};

struct Row {
  const char* workload;
  const char* label;
  const char* key;
  double scale;     // value / scale is shown
  int decimals;
  const char* target_text;  // for memdiag; nullptr = no target
  char op;                  // '<' (<=), '>' (>=), 'l' (strictly <), '=' (==)
  double target;
  // A reference machine's figures (shown units) of glibc, jemalloc, mimalloc, tcmalloc, which the
  // target was set against; 0 = none. The summary scales the target by how this run's figures
  // of those allocators compare with them (the median of measured / reference).
  double ref[4] = {0, 0, 0, 0};
};
const char* const kRefAllocators[4] = {"glibc", "jemalloc", "mimalloc", "tcmalloc"};

const Row kRows[] = {
    {"churn", "ns per free+malloc", "ns_per_op", 1, 1, "<= 7.5", '<', 7.5, {22.8, 13.7, 9.9, 7.7}},
    {"churn", "peak RSS, MiB", "peak_rss_bytes", MiB, 1, "<= 8.2", '<', 8.2, {8.2, 9.9, 9.8, 13.0}},
    {"churn2", "ns/op per thread", "ns_per_op", 1, 1, "<= 9.5", '<', 9.5, {34.7, 16.6, 13.0, 9.6}},
    {"churn2", "peak RSS, MiB", "peak_rss_bytes", MiB, 1, nullptr, 0, 0},
    {"ort", "us per 2 MiB cycle", "ns_per_op", 1000, 2, nullptr, 0, 0},
    {"ort", "peak RSS, MiB", "peak_rss_bytes", MiB, 1, nullptr, 0, 0},
    {"ort", "failures", "failures", 1, 0, "== 0", '=', 0},
    {"zig", "maps before frees", "maps_before", 1, 0, nullptr, 0, 0},
    {"zig", "maps after", "maps_after", 1, 0, nullptr, 0, 0},
    {"zig", "new mappings", "new_mappings", 1, 0, "<= 0", '<', 0},
    {"zig", "failures", "failures", 1, 0, "== 0", '=', 0},
    {"zig", "ns per free", "ns_per_op", 1, 0, nullptr, 0, 0},
    {"release", "returned in 1 s idle", "returned_fraction_1s", 1, 3, ">= 0.99", '>', 0.99},
    {"release", "release_unused ms/GiB", "release_ms_per_gib", 1, 3, "< 1", 'l', 1},
    {"release", "bare madvise ms/GiB", "madvise_floor_ms_per_gib", 1, 3, nullptr, 0, 0},
    {"release", "same, THP option, ms/GiB", "release_ms_per_gib_thp", 1, 3, nullptr, 0, 0},
    {"release", "peak RSS, MiB", "peak_rss_bytes", MiB, 1, nullptr, 0, 0},
    {"fault", "first touch p50, ns", "fault_p50_ns", 1, 0, nullptr, 0, 0},
    {"fault", "first touch p99, ns", "fault_p99_ns", 1, 0, nullptr, 0, 0},
};

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string cell_text(const Combo* c, const char* key, double scale, int decimals) {
  if (c == nullptr) return "";
  if (c->status == "not installed") return "n/inst";
  if (c->status == "not built") return "n/built";
  if (c->status == "not measured") return "n/meas";
  if (c->status == "error") return "ERROR";
  if (c->reps.empty()) return "-";
  const auto v = number(c->med, key);
  if (!v) return "-";
  return fmt(*v / scale, decimals);
}

void print_summary(FILE* out, const std::vector<std::string>& allocators, const std::vector<std::string>& workloads,
                   std::map<std::pair<std::string, std::string>, Combo>& combos, int repetitions, bool quick) {
  std::fprintf(out, "\nmemdiag-alloc-bench%s: %d repetition%s, %s; each run a fresh process, allocators alternating\n",
               quick ? " --quick (tiny sizes: not comparable with the targets)" : "", repetitions,
               repetitions == 1 ? "" : "s", repetitions == 1 ? "single values" : "medians");
  std::fprintf(out, "%-8s %-22s", "workload", "figure");
  for (const auto& a : allocators) std::fprintf(out, " %10s", a.c_str());
  const bool have_memdiag = std::find(allocators.begin(), allocators.end(), "memdiag") != allocators.end();
  if (have_memdiag) std::fprintf(out, "   %-8s %-8s %8s %-9s %s", "target", "memdiag", "machine", "scaled", "memdiag");
  std::fprintf(out, "\n");
  auto judge = [](const Row& row, double x, double target) {
    const bool met = row.op == '<'   ? x <= target
                     : row.op == '>' ? x >= target
                     : row.op == 'l' ? x < target
                                     : x == target;
    return std::string(met ? "met" : "MISSED");
  };
  for (const Row& row : kRows) {
    if (std::find(workloads.begin(), workloads.end(), row.workload) == workloads.end()) continue;
    std::fprintf(out, "%-8s %-22s", row.workload, row.label);
    for (const auto& a : allocators) {
      auto it = combos.find({row.workload, a});
      std::fprintf(out, " %10s", cell_text(it == combos.end() ? nullptr : &it->second, row.key, row.scale,
                                           row.decimals).c_str());
    }
    if (row.target_text != nullptr && have_memdiag) {
      std::optional<double> x;
      auto it = combos.find({row.workload, "memdiag"});
      if (it != combos.end() && !it->second.reps.empty()) {
        if (auto v = number(it->second.med, row.key)) x = *v / row.scale;
      }
      std::fprintf(out, "   %-8s %-8s", row.target_text, x ? judge(row, *x, row.target).c_str() : "n/meas");
      // This machine against the reference machine: the median of measured / reference figure.
      std::vector<double> factors;
      for (int r = 0; r < 4; ++r) {
        if (row.ref[r] <= 0) continue;
        auto o = combos.find({row.workload, kRefAllocators[r]});
        if (o == combos.end() || o->second.reps.empty()) continue;
        if (auto v = number(o->second.med, row.key)) factors.push_back(*v / row.scale / row.ref[r]);
      }
      if (!factors.empty()) {
        const double f = median(factors);
        const double scaled = row.target * f;
        std::fprintf(out, " %8s %-9s %s", ("x" + fmt(f, 2)).c_str(),
                     (std::string(row.op == '<' ? "<= " : row.op == '>' ? ">= " : "< ") + fmt(scaled, row.decimals))
                         .c_str(),
                     x ? judge(row, *x, scaled).c_str() : "n/meas");
      }
    }
    std::fprintf(out, "\n");
  }
  if (have_memdiag) {
    std::fprintf(out,
                 "(target: memdiag's own; machine: this run's figures of the other allocators / "
                 "the reference machine's, median; scaled: the target times that)\n");
  }
  // memdiag / other, per figure.
  std::vector<std::string> others;
  for (const auto& a : allocators) {
    if (a != "memdiag") others.push_back(a);
  }
  if (!have_memdiag || others.empty()) return;
  std::fprintf(out, "\nratio memdiag / other (below 1: memdiag lower)\n%-8s %-22s", "workload", "figure");
  for (const auto& a : others) std::fprintf(out, " %10s", ("/" + a).c_str());
  std::fprintf(out, "\n");
  for (const Row& row : kRows) {
    if (std::find(workloads.begin(), workloads.end(), row.workload) == workloads.end()) continue;
    if (std::strcmp(row.key, "failures") == 0 || std::strcmp(row.key, "new_mappings") == 0 ||
        std::strcmp(row.key, "release_ms_per_gib") == 0 ||
        std::strcmp(row.key, "madvise_floor_ms_per_gib") == 0 ||
        std::strcmp(row.key, "release_ms_per_gib_thp") == 0) {
      continue;  // counts and memdiag-only figures: no ratio
    }
    auto m = combos.find({row.workload, "memdiag"});
    std::optional<double> mv;
    if (m != combos.end() && !m->second.reps.empty()) mv = number(m->second.med, row.key);
    std::fprintf(out, "%-8s %-22s", row.workload, row.label);
    for (const auto& a : others) {
      auto it = combos.find({row.workload, a});
      std::string text = "-";
      if (it != combos.end() && !it->second.reps.empty() && mv) {
        if (auto ov = number(it->second.med, row.key); ov && *ov > 0 && *mv >= 0) {
          // A near-zero denominator (mimalloc's returned fraction) makes no ratio worth printing.
          text = *mv / *ov > 999 ? ">999" : fmt(*mv / *ov, 2);
        }
      }
      std::fprintf(out, " %10s", text.c_str());
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out,
               "(n/inst: allocator not installed; n/built: built without memdiag_alloc; n/meas: not measured "
               "in this build; -: not defined for the workload)\n");
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: memdiag-alloc-bench [--all] [--allocator A[,B...]] [--workload W[,V...]]\n"
               "                           [--repetitions N] [--quick] [--json]\n"
               "  allocators: memdiag glibc jemalloc mimalloc tcmalloc (default: all)\n"
               "  workloads:  churn churn2 ort zig release fault (default: all)\n"
               "  --repetitions N  runs of each combination, allocators alternating; medians\n"
               "                   (default 3 for several combinations, 1 for a single one)\n"
               "  --quick          tiny sizes (100k churn ops, 100 ort cycles, 200 zig blocks,\n"
               "                   64 MiB release, 16 MiB fault): the CI smoke\n"
               "  --json           only JSON lines on stdout; the summary goes to stderr (so it\n"
               "                   does for a single allocator and workload)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string allocator_arg;
  std::string workload_arg;
  bool child = false;
  bool json_only = false;
  bool all = false;
  int repetitions = 0;
  Params prm;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& name) -> std::string {
      if (a.size() > name.size() && a.compare(0, name.size() + 1, name + "=") == 0) return a.substr(name.size() + 1);
      if (i + 1 >= argc) {
        std::fprintf(stderr, "memdiag-alloc-bench: %s needs a value\n", name.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    if (is("--allocator")) {
      allocator_arg = value("--allocator");
    } else if (is("--workload")) {
      workload_arg = value("--workload");
    } else if (is("--repetitions")) {
      repetitions = std::atoi(value("--repetitions").c_str());
      if (repetitions < 1) {
        std::fprintf(stderr, "memdiag-alloc-bench: --repetitions must be >= 1\n");
        return 2;
      }
    } else if (a == "--quick") {
      prm.make_quick();
    } else if (a == "--json") {
      json_only = true;
    } else if (a == "--all") {
      all = true;
    } else if (a == "--child") {
      child = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "memdiag-alloc-bench: unknown argument %s\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  std::vector<std::string> allocators = all || allocator_arg.empty() || allocator_arg == "all"
                                            ? kAllocators : split_list(allocator_arg);
  std::vector<std::string> workloads = all || workload_arg.empty() || workload_arg == "all"
                                           ? kWorkloads : split_list(workload_arg);
  for (const auto& a : allocators) {
    if (std::find(kAllocators.begin(), kAllocators.end(), a) == kAllocators.end()) {
      std::fprintf(stderr, "memdiag-alloc-bench: unknown allocator %s\n", a.c_str());
      return 2;
    }
  }
  for (const auto& w : workloads) {
    if (std::find(kWorkloads.begin(), kWorkloads.end(), w) == kWorkloads.end()) {
      std::fprintf(stderr, "memdiag-alloc-bench: unknown workload %s\n", w.c_str());
      return 2;
    }
  }

  if (child) {
    if (allocators.size() != 1 || workloads.size() != 1) {
      std::fprintf(stderr, "memdiag-alloc-bench: --child needs one --allocator and one --workload\n");
      return 2;
    }
    return child_main(allocators[0], workloads[0], prm);
  }

  if (repetitions == 0) repetitions = allocators.size() * workloads.size() == 1 ? 1 : 3;
  // A single combination (what scripts drive) keeps stdout to JSON lines; so does --json.
  FILE* summary_out = json_only || allocators.size() * workloads.size() == 1 ? stderr : stdout;
  const std::string exe = self_exe();

  std::map<std::pair<std::string, std::string>, Combo> combos;
  std::map<std::string, std::string> preload;
  for (const auto& a : allocators) {
    std::string status = "ok";
    std::string why;
    if (a == "memdiag") {
#ifndef MEMDIAG_HAVE_ALLOC
      status = "not built";
      why = "built without the memdiag_alloc library";
#endif
    } else if (a != "glibc") {
      preload[a] = preload_library(a);
      if (preload[a].empty()) {
        status = "not installed";
        why = "no shared library of " + a + " found (deploy/install-deps.sh --test installs it)";
      }
#ifdef MEMDIAG_BENCH_SANITIZED
      status = "not measured";
      why = "sanitizer build: LD_PRELOAD allocators cannot run under ASan";
#endif
    }
    for (const auto& w : workloads) {
      Combo& c = combos[{w, a}];
      c.status = status == "ok" ? "pending" : status;
      if (status != "ok") {
        JsonLine j;
        j.str("workload", w);
        j.str("allocator", a);
        j.str("status", status);
        for (const char* k : kCoreKeys) j.null(k);
        j.str("reason", why);
        std::printf("%s\n", j.text().c_str());
      }
    }
  }
#ifdef MEMDIAG_BENCH_SANITIZED
  std::fprintf(stderr, "memdiag-alloc-bench: WARNING: sanitizer build, figures are meaningless\n");
#endif
  std::fflush(stdout);

  bool any_error = false;
  for (int rep = 0; rep < repetitions; ++rep) {
    for (const auto& w : workloads) {
      for (std::size_t k = 0; k < allocators.size(); ++k) {
        const std::string& a = allocators[(k + static_cast<std::size_t>(rep)) % allocators.size()];
        Combo& c = combos[{w, a}];
        if (c.status != "pending" && c.status != "ok") continue;
        ChildOutcome r = run_child(exe, a, w, preload.count(a) ? preload[a] : "", prm.quick);
        Object o;
        if (r.ok && !parse_flat_json(r.line, o)) {
          r.ok = false;
          r.error = "child printed unparsable JSON: " + r.line;
        }
        if (!r.ok) {
          c.status = "error";
          c.error = r.error;
          any_error = true;
          JsonLine j;
          j.str("workload", w);
          j.str("allocator", a);
          j.num("repetition", rep + 1);
          j.str("status", "error");
          for (const char* key : kCoreKeys) j.null(key);
          j.str("error", r.error);
          std::printf("%s\n", j.text().c_str());
          std::fprintf(stderr, "memdiag-alloc-bench: %s/%s failed: %s\n", a.c_str(), w.c_str(), r.error.c_str());
        } else {
          c.status = "ok";
          c.reps.push_back(o);
          std::printf("%s\n", object_line(o, {{"repetition", json_number(rep + 1)}}).c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  for (auto& [key, c] : combos) {
    if (c.reps.empty() || c.status != "ok") {
      c.reps.clear();
      continue;
    }
    c.med = median_object(c.reps);
  }
  if (repetitions > 1) {
    for (const auto& w : workloads) {
      for (const auto& a : allocators) {
        const Combo& c = combos[{w, a}];
        if (c.reps.empty()) continue;
        std::printf("%s\n", object_line(c.med, {{"aggregate", "\"median\""},
                                                {"repetitions", json_number(static_cast<double>(c.reps.size()))}})
                                .c_str());
      }
    }
  }
  std::fflush(stdout);
  print_summary(summary_out, allocators, workloads, combos, repetitions, prm.quick);
  for (const auto& [key, c] : combos) {
    if (c.status == "error") {
      std::fprintf(summary_out, "ERROR %s/%s: %s\n", key.second.c_str(), key.first.c_str(), c.error.c_str());
    }
  }
  std::fflush(nullptr);
  return any_error ? 1 : 0;
}
