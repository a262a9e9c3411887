// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/proc_process_scanner.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <utility>

#include "probes/linux/process/process_status_parser.hpp"

namespace memdiag {

// Sized for the files, not the processes: status is under 2 KiB, cgroup one line per v1
// hierarchy, and maps is streamed through its buffer however long it is.
struct ProcProcessScanner::Buffers {
  alignas(8) char dirents[32 * 1024];
  char status[8 * 1024];
  char cgroup[16 * 1024];
  char maps[64 * 1024];
};

namespace {

// struct linux_dirent64 (getdents64(2)): ino (8), off (8), reclen (2), type (1), name.
constexpr std::size_t kDirentReclenOffset = 16;
constexpr std::size_t kDirentNameOffset = 19;

constexpr std::string_view kVsyscallLine = "[vsyscall]\n";

// Process ids are the all-digit names of the procfs root ("self", "sys", ... are not).
bool parse_pid(std::string_view name, int& pid) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  return ec == std::errc() && end == name.data() + name.size() && pid > 0;
}

// "PID/file", NUL-terminated, on the caller's stack: no allocation per file.
struct PidPath {
  char text[48];
  PidPath(int pid, std::string_view file) {
    char* end = std::to_chars(text, text + 16, pid).ptr;
    *end++ = '/';
    std::memcpy(end, file.data(), file.size());  // callers pass "status", "maps", "cgroup"
    end[file.size()] = '\0';
  }
};

int open_in(int dir_fd, int pid, std::string_view file) {
  int fd;
  do {
    fd = ::openat(dir_fd, PidPath(pid, file).text, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

ssize_t read_retrying(int fd, char* buffer, std::size_t size) {
  ssize_t n;
  do {
    n = ::read(fd, buffer, size);
  } while (n < 0 && errno == EINTR);
  return n;
}

// Closes on every path out of a read helper.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

ProcProcessScanner::ProcProcessScanner(std::string procfs_root, std::optional<CgroupVersion> memory_version)
    : procfs_root_(std::move(procfs_root)),
      memory_version_(memory_version),
      buffers_(std::make_unique<Buffers>()) {}

ProcProcessScanner::~ProcProcessScanner() {
  if (proc_fd_ >= 0) ::close(proc_fd_);
}

const std::string* ProcProcessScanner::cgroup_path(std::uint64_t cgroup_key) const {
  if (cgroup_key == 0 || cgroup_key > cgroup_paths_.size()) return nullptr;
  return cgroup_paths_[cgroup_key - 1];
}

Status ProcProcessScanner::scan(std::vector<ProcessMaps>& out) {
  out.clear();
  problems_.vanished = problems_.unreadable = problems_.malformed = 0;
  problems_.first.clear();  // keeps its capacity
  forget_unused_cgroups();
  ++scan_number_;

  // The root is opened once and listed again each scan from offset 0; a descriptor that stops
  // working is dropped, and the next scan opens the root afresh.
  if (proc_fd_ < 0) {
    proc_fd_ = ::open(procfs_root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc_fd_ < 0) return make_error(procfs_root_ + ": " + std::strerror(errno));
  }
  auto fail = [this](const char* what) -> Status {
    const int err = errno;
    ::close(proc_fd_);
    proc_fd_ = -1;
    return make_error(procfs_root_ + ": " + what + ": " + std::strerror(err));
  };
  if (::lseek(proc_fd_, 0, SEEK_SET) < 0) return fail("lseek");

  char* const dirents = buffers_->dirents;
  for (;;) {
    // getdents64 rather than readdir(3): the buffer is ours, so listing allocates nothing.
    const long n = ::syscall(SYS_getdents64, proc_fd_, dirents, sizeof buffers_->dirents);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("getdents64");
    }
    if (n == 0) break;
    for (long at = 0; at < n;) {
      std::uint16_t reclen;
      std::memcpy(&reclen, dirents + at + kDirentReclenOffset, sizeof reclen);
      int pid;
      if (parse_pid(std::string_view(dirents + at + kDirentNameOffset), pid)) scan_process(pid, out);
      at += reclen;
    }
  }
  return Ok{};
}

void ProcProcessScanner::scan_process(int pid, std::vector<ProcessMaps>& out) {
  std::string_view status_text;
  if (read_small_file(pid, "status", buffers_->status, sizeof buffers_->status, status_text) != Problem::kNone) {
    return;
  }
  auto status = parse_process_status(status_text);
  if (!status) {
    note(Problem::kMalformed, pid, "status", status.error().message);
    return;
  }
  if (!status->has_mm) return;  // a kernel thread or a zombie: no mappings to count

  std::uint32_t map_count = 0;
  if (count_maps(pid, map_count) != Problem::kNone) return;

  // The cgroup is a label on the record: a process whose cgroup file cannot be read or parsed
  // is still recorded (cgroup_key 0, unknown), since its map count is what matters, and the
  // problem is reported. Only a process that is gone is left out.
  std::uint64_t cgroup_key = 0;
  if (memory_version_) {
    std::string_view cgroup_text;
    const Problem cgroup_read =
        read_small_file(pid, "cgroup", buffers_->cgroup, sizeof buffers_->cgroup, cgroup_text);
    if (cgroup_read == Problem::kVanished) return;
    if (cgroup_read == Problem::kNone) {
      auto cgroup = memory_cgroup_of(cgroup_text, *memory_version_);
      if (cgroup) {
        cgroup_key = intern_cgroup(*cgroup);
      } else {
        note(Problem::kMalformed, pid, "cgroup", cgroup.error().message);
      }
    }
  }

  ProcessMaps& record = out.emplace_back();
  record.pid = pid;
  record.map_count = map_count;
  record.rss_anon_bytes = status->rss_anon_bytes;
  record.rss_file_bytes = status->rss_file_bytes;
  record.rss_shmem_bytes = status->rss_shmem_bytes;
  record.swap_bytes = status->swap_bytes;
  record.virtual_bytes = status->virtual_bytes;
  // Saturating: the kernel's figures cannot overflow, a malformed file's can.
  record.committed_private_bytes = status->data_bytes > UINT64_MAX - status->stack_bytes
                                       ? UINT64_MAX
                                       : status->data_bytes + status->stack_bytes;
  unescape_process_name(status->name, record.comm.data(), record.comm.size());
  record.cgroup_key = cgroup_key;
}

ProcProcessScanner::Problem ProcProcessScanner::read_small_file(int pid, std::string_view file, char* buffer,
                                                                std::size_t capacity, std::string_view& text) {
  const int fd = open_in(proc_fd_, pid, file);
  if (fd < 0) return note_errno(pid, file, errno);
  FdCloser closer{fd};
  // status and cgroup are generated whole on the first read (single_open seq_files), so one
  // read that leaves room is all of it; a full buffer means a file larger than any kernel's.
  const ssize_t n = read_retrying(fd, buffer, capacity);
  if (n < 0) return note_errno(pid, file, errno);
  if (n == 0) return note(Problem::kVanished, pid, file, {});  // exited: no task left to show
  if (static_cast<std::size_t>(n) == capacity) {
    return note(Problem::kMalformed, pid, file, "larger than any kernel writes it");
  }
  text = std::string_view(buffer, static_cast<std::size_t>(n));
  return Problem::kNone;
}

ProcProcessScanner::Problem ProcProcessScanner::count_maps(int pid, std::uint32_t& map_count) {
  const int fd = open_in(proc_fd_, pid, "maps");
  if (fd < 0) return note_errno(pid, "maps", errno);
  FdCloser closer{fd};
  // One line per mapping. Only the end of the file is kept, to see whether the last line is
  // [vsyscall] (x86-64 vsyscall emulation: shown in maps, not a VMA of the mm).
  char tail[kVsyscallLine.size()];
  std::size_t tail_size = 0;
  std::uint64_t lines = 0;
  char* const chunk = buffers_->maps;
  for (;;) {
    const ssize_t n = read_retrying(fd, chunk, sizeof buffers_->maps);
    if (n < 0) return note_errno(pid, "maps", errno);
    if (n == 0) break;
    const auto size = static_cast<std::size_t>(n);
    for (const char* p = chunk; (p = static_cast<const char*>(std::memchr(p, '\n', chunk + size - p))); ++p) {
      ++lines;
    }
    if (size >= sizeof tail) {
      std::memcpy(tail, chunk + size - sizeof tail, sizeof tail);
      tail_size = sizeof tail;
    } else {  // a short chunk: slide the tail along
      const std::size_t keep = std::min(tail_size, sizeof tail - size);
      std::memmove(tail, tail + tail_size - keep, keep);
      std::memcpy(tail + keep, chunk, size);
      tail_size = keep + size;
    }
  }
  // Every process with an mm has mappings: an empty maps is one whose mm went as it exited.
  if (lines == 0) return note(Problem::kVanished, pid, "maps", {});
  if (std::string_view(tail, tail_size) == kVsyscallLine) --lines;
  map_count = static_cast<std::uint32_t>(lines);
  return Problem::kNone;
}

ProcProcessScanner::Problem ProcProcessScanner::note_errno(int pid, std::string_view file, int err) {
  // ENOENT: the PID directory is gone; ESRCH: the directory is still open but the task is not.
  if (err == ENOENT || err == ESRCH) return note(Problem::kVanished, pid, file, {});
  return note(Problem::kUnreadable, pid, file, std::strerror(err));
}

ProcProcessScanner::Problem ProcProcessScanner::note(Problem problem, int pid, std::string_view file,
                                                     std::string_view why) {
  switch (problem) {
    case Problem::kVanished:
      ++problems_.vanished;
      return problem;  // normal: not worth a log line
    case Problem::kUnreadable:
      ++problems_.unreadable;
      break;
    case Problem::kMalformed:
      ++problems_.malformed;
      break;
    case Problem::kNone:
      return problem;
  }
  if (problems_.first.empty()) {  // the only allocation a problem costs, once a scan
    char pid_text[16];
    problems_.first.assign(pid_text, std::to_chars(pid_text, pid_text + sizeof pid_text, pid).ptr);
    problems_.first.append("/").append(file).append(": ").append(why);
  }
  return problem;
}

std::uint64_t ProcProcessScanner::intern_cgroup(std::string_view path) {
  auto it = cgroup_keys_.find(path);
  if (it == cgroup_keys_.end()) {
    it = cgroup_keys_.emplace(std::string(path), InternedCgroup{cgroup_paths_.size() + 1, 0}).first;
    cgroup_paths_.push_back(&it->first);
  }
  it->second.last_scan = scan_number_;
  return it->second.key;
}

void ProcProcessScanner::forget_unused_cgroups() {
  // Keys only need to last until the next scan, so when most paths belong to cgroups no longer
  // seen (pods come and go) the table starts over. Rare: a scan that rebuilds allocates.
  std::size_t live = 0;
  for (const auto& [path, interned] : cgroup_keys_) live += interned.last_scan == scan_number_;
  if (cgroup_keys_.size() <= 2 * live + 64) return;
  cgroup_keys_.clear();
  cgroup_paths_.clear();
}

}  // namespace memdiag
