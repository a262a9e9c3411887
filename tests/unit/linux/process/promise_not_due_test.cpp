// SPDX-License-Identifier: Apache-2.0
// Thread stacks and private file mappings told apart in /proc/PID/maps: on text (every shape the
// classifier must tell apart, and refused input), then on this test process's own maps after it
// started threads and mapped a file privately for writing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probes/linux/process/promise_not_due.hpp"

namespace memdiag {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(PromiseNotDue, TellsThreadStacksAndPrivateFileMapsFromPromises) {
  const auto got = classify_maps(
      // a library: read-only text, then its .data written privately (file-backed, writable)
      "7f0000000000-7f0000010000 r-xp 00000000 fe:00 1234   /usr/lib/libc.so.6\n"
      "7f0000010000-7f0000012000 rw-p 00010000 fe:00 1234   /usr/lib/libc.so.6\n"
      // a thread: a one-page guard, the 8 MiB stack right above it
      "7f0001000000-7f0001001000 ---p 00000000 00:00 0 \n"
      "7f0001001000-7f0001801000 rw-p 00000000 00:00 0 \n"
      // a malloc arena: the used part, its PROT_NONE reserve above: not a stack
      "7f0002000000-7f0002200000 rw-p 00000000 00:00 0 \n"
      "7f0002200000-7f0006000000 ---p 00000000 00:00 0 \n"
      // a promise: anonymous read-write, after a gap
      "7f0008000000-7f0048000000 rw-p 00000000 00:00 0 \n"
      // a guard too large to be a stack's, then read-write: not a stack
      "7f0050000000-7f0050200000 ---p 00000000 00:00 0 \n"
      "7f0050200000-7f0050400000 rw-p 00000000 00:00 0 \n"
      // shared writable file: not private, not in VmData
      "7f0060000000-7f0060100000 rw-s 00000000 fe:00 99     /dev/shm/x\n"
      // the heap and the main stack: named, not thread stacks
      "55d000000000-55d000100000 rw-p 00000000 00:00 0      [heap]\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n");
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->thread_stack_bytes, 8 * kMiB);
  EXPECT_EQ(got->private_file_bytes, 0x2000u);
  EXPECT_EQ(got->mappings, 12u);
}

TEST(PromiseNotDue, AStackMustSitRightAboveItsGuard) {
  const auto got = classify_maps(
      "7f0001000000-7f0001001000 ---p 00000000 00:00 0 \n"
      "7f0001002000-7f0001802000 rw-p 00000000 00:00 0 \n");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->thread_stack_bytes, 0u);
}

TEST(PromiseNotDue, RefusesWhatIsNotAMapsFile) {
  for (std::string_view bad : {
           std::string_view("7f0001000000-7f0001001000 ---p 00000000 00:00 0"),  // no final newline
           std::string_view("garbage\n"),
           std::string_view("7f0001000000 ---p 00000000 00:00 0\n"),               // no range
           std::string_view("7f00010000zz-7f0001001000 ---p 00000000 00:00 0\n"),  // not hex
           std::string_view("7f0001001000-7f0001000000 ---p 00000000 00:00 0\n"),  // ends before it starts
           std::string_view("7f0001000000-7f0001001000 ---p 00000000 00:00\n"),    // cut before the inode
           std::string_view("7f0001000000-7f0001001000 rw 00000000 00:00 0\n"),    // flags cut short
           std::string_view("7f0001000000-7f0001001000 rw-p 00000000 00:00 x\n"),  // inode not a number
       }) {
    const auto got = classify_maps(bad);
    EXPECT_FALSE(got) << bad;
    if (!got) {
      EXPECT_FALSE(got.error().message.empty());
    }
  }
  EXPECT_FALSE(read_promise_not_due("/nonexistent/maps"));
  // A kernel thread's maps are empty: nothing, not an error.
  const auto empty = classify_maps("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->mappings, 0u);
}

TEST(PromiseNotDue, ReadsALongMapsFileInChunksAndBoundsIt) {
  // 5,000 guard+stack pairs: ~400 KB, several reads of 64 KiB with lines cut between them.
  const std::string path = std::filesystem::temp_directory_path() / ("memdiag-maps-" + std::to_string(::getpid()));
  std::string text;
  char line[128];
  for (std::uint64_t i = 0; i < 5000; ++i) {
    const std::uint64_t base = 0x7f0000000000 + i * 0x10000;
    std::snprintf(line, sizeof line, "%lx-%lx ---p 00000000 00:00 0 \n%lx-%lx rw-p 00000000 00:00 0 \n",
                  static_cast<unsigned long>(base), static_cast<unsigned long>(base + 0x1000),
                  static_cast<unsigned long>(base + 0x1000), static_cast<unsigned long>(base + 0x9000));
    text += line;
  }
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  const auto got = read_promise_not_due(path);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->mappings, 10000u);
  EXPECT_EQ(got->thread_stack_bytes, 5000u * 0x8000);
  EXPECT_EQ(*classify_maps(text), *got);
  const auto bounded = read_promise_not_due(path, 100);
  ASSERT_FALSE(bounded);
  EXPECT_NE(bounded.error().message.find("more than 100 mappings"), std::string::npos);
  std::filesystem::remove(path);
}

// The real kernel's maps: eight threads parked, and a 64 MiB file mapped privately for writing.
TEST(PromiseNotDue, SeesThisProcessesThreadStacksAndPrivateFileMap) {
  const auto before = read_promise_not_due("/proc/self/maps");
  ASSERT_TRUE(before) << before.error().message;

  const std::string path =
      std::filesystem::temp_directory_path() / ("memdiag-private-map-" + std::to_string(::getpid()));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 64 * kMiB), 0);
  void* mapped = ::mmap(nullptr, 64 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);

  std::mutex mutex;
  std::condition_variable release;
  bool done = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      std::unique_lock lock(mutex);
      release.wait(lock, [&] { return done; });
    });
  }
  const auto during = read_promise_not_due("/proc/self/maps");
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  release.notify_all();
  for (auto& t : threads) t.join();
  ::munmap(mapped, 64 * kMiB);
  ::close(fd);
  std::filesystem::remove(path);

  ASSERT_TRUE(during) << during.error().message;
  EXPECT_GE(during->private_file_bytes, before->private_file_bytes + 64 * kMiB);
  // glibc gives each thread a stack of RLIMIT_STACK (8 MiB by default) less its guard page.
  // Stacks of earlier tests' threads may still be mapped (glibc caches them), so the eight
  // live ones are a floor of what is counted, not the whole of it.
  rlimit stack{};
  ASSERT_EQ(::getrlimit(RLIMIT_STACK, &stack), 0);
  if (stack.rlim_cur != RLIM_INFINITY) {
    EXPECT_GE(during->thread_stack_bytes, 8 * (stack.rlim_cur - static_cast<std::uint64_t>(::getpagesize())));
  }
  EXPECT_GT(during->thread_stack_bytes, before->thread_stack_bytes);
}

}  // namespace
}  // namespace memdiag
