// SPDX-License-Identifier: Apache-2.0
// A kernel text file read again and again. The descriptor stays open and each read starts
// at offset 0 (procfs and seq_file regenerate the content), so a sample costs preads instead
// of open+read+close, and keeps working when the node cannot spare much. If the file
// disappears or an old descriptor goes stale, the next read reopens it.
#pragma once

#include <string>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag {

class KernelFile {
 public:
  enum class Reads {
    // Read until pread returns 0. Needed for seq_files with one record per line (vmstat,
    // smaps): each read returns at most about a page, cut at a record boundary.
    kUntilEnd,
    // The kernel generates the whole file in one record (single_open seq_files such as
    // meminfo and PSI, /proc/sys handlers): a read that returns less than asked is the end,
    // which saves the extra read that would return 0.
    kOneRecord,
  };

  // Files larger than this are treated as garbage rather than read into memory.
  static constexpr std::size_t kMaxBytes = 1 << 20;

  // `initial_capacity` is the first read's size; it grows as needed. Keep it small for
  // /proc/sys files: the kernel allocates and zeroes a buffer as large as each read asks.
  explicit KernelFile(std::string path, Reads reads = Reads::kUntilEnd, std::size_t initial_capacity = 4096);
  ~KernelFile();
  KernelFile(const KernelFile&) = delete;
  KernelFile& operator=(const KernelFile&) = delete;
  KernelFile(KernelFile&& other) noexcept;
  KernelFile& operator=(KernelFile&& other) noexcept;

  // The content, valid until the next read. Errors name the path and errno text.
  Expected<std::string_view> read();

  // Whether the file exists (without keeping it open).
  bool exists() const;

  const std::string& path() const { return path_; }

 private:
  Expected<std::string_view> read_open_descriptor();
  void close_descriptor();

  std::string path_;
  Reads reads_;
  int fd_ = -1;
  std::string buffer_;
};

// Reads a small file once (open, read to the end, close) into `buffer`, for files too many to
// keep open (one set per cgroup). Errors name the path; `missing` is set for ENOENT so callers
// can tell "not on this kernel / gone meanwhile" from a real failure.
Expected<std::string_view> read_file_once(const std::string& path, std::string& buffer, bool* missing = nullptr);

}  // namespace memdiag
