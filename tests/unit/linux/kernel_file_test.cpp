// SPDX-License-Identifier: Apache-2.0
// KernelFile: the descriptor kept open and pread from offset 0 that every Linux source reads through.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probes/linux/kernel_file.hpp"

namespace memdiag {
namespace {

// A fresh directory per test, so concurrent runs of the suite never share files.
std::string make_temp_dir() {
  std::string pattern = ::testing::TempDir() + "/memdiag-test-XXXXXX";
  const char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return pattern;
}

TEST(KernelFile, RereadsFromOffsetZeroAndSeesNewContent) {
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/file";
  { std::ofstream(path) << "first\n"; }
  KernelFile file(path);
  auto one = file.read();
  ASSERT_TRUE(one);
  EXPECT_EQ(*one, "first\n");
  { std::ofstream(path, std::ios::trunc) << "second, longer content\n"; }
  auto two = file.read();
  ASSERT_TRUE(two);
  EXPECT_EQ(*two, "second, longer content\n");
  std::filesystem::remove(path);
  EXPECT_FALSE(file.exists());
  std::filesystem::remove_all(dir);
}

TEST(KernelFile, MultiRecordSeqFileIsReadToTheEnd) {
  // /proc/self/smaps is tens of KiB of one-record-per-line seq_file: every read returns at most
  // about a page, so stopping at the first short read would silently truncate it (as it would
  // /proc/vmstat on a busy host once it outgrows 4 KiB).
  KernelFile file("/proc/self/smaps");
  auto content = file.read();
  ASSERT_TRUE(content);
  EXPECT_GT(content->size(), 8192u);
  // The last mapping of an x86-64 process is [vsyscall]; stopping early would miss it.
  EXPECT_NE(content->find("[vsyscall]"), std::string_view::npos);
  EXPECT_EQ(content->back(), '\n');
}

TEST(KernelFile, RealProcfsRereadIsFresh) {
  // /proc/vmstat changes between reads of the same descriptor (pgfault moves as we touch
  // memory): proves pread at offset 0 regenerates procfs content instead of a stale copy.
  KernelFile file("/proc/vmstat");
  auto one = file.read();
  ASSERT_TRUE(one);
  const std::string first(*one);
  std::vector<char> touch(64 << 20, 1);  // fault in 16k pages: pgfault must move
  auto two = file.read();
  ASSERT_TRUE(two);
  EXPECT_NE(first, std::string(*two));
  EXPECT_GT(touch[4096], 0);
}

TEST(KernelFile, LargerThanLimitIsRefused) {
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/big";
  { std::ofstream(path) << std::string(KernelFile::kMaxBytes + 10, 'x'); }
  KernelFile file(path);
  auto content = file.read();
  ASSERT_FALSE(content);
  EXPECT_NE(content.error().message.find("larger than"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(KernelFile, MissingFileNamesThePath) {
  KernelFile file("/nonexistent/meminfo");
  auto content = file.read();
  ASSERT_FALSE(content);
  EXPECT_NE(content.error().message.find("/nonexistent/meminfo"), std::string::npos);
}

}  // namespace
}  // namespace memdiag
