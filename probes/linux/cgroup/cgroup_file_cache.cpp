// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_file_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "probes/linux/kernel_file.hpp"

namespace memdiag {
namespace {

bool is_missing(int err) {
  // ENODEV: the cgroup is being removed right now (kernfs node deactivated).
  return err == ENOENT || err == ENODEV;
}

}  // namespace

std::size_t cgroup_descriptor_budget(std::size_t ceiling) {
  constexpr rlim_t kReserve = 512;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return ceiling;
  if (limit.rlim_cur <= kReserve) return 0;
  return std::min<std::size_t>(ceiling, (limit.rlim_cur - kReserve) / 2);
}

CgroupFileCache::CgroupFileCache(std::size_t max_open_files) : max_open_files_(max_open_files) {
  buffer_.resize(4096);
}

CgroupFileCache::~CgroupFileCache() { clear(); }

CgroupFileCache::Entry& CgroupFileCache::entry(const std::string& key) {
  Entry& e = entries_[key];
  e.seen = sample_;
  return e;
}

void CgroupFileCache::close_entry(Entry& entry) {
  for (int& fd : entry.fds) {
    if (fd >= 0) {
      ::close(fd);
      --open_files_;
    }
    fd = Entry::kNotOpen;
  }
}

void CgroupFileCache::end_sample() {
  const bool retry_missing = sample_ % kMissingRetrySamples == 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.seen != sample_) {
      close_entry(it->second);
      it = entries_.erase(it);
      continue;
    }
    if (retry_missing) {
      for (int& fd : it->second.fds) {
        if (fd == Entry::kMissing) fd = Entry::kNotOpen;
      }
    }
    ++it;
  }
  ++sample_;
}

void CgroupFileCache::clear() {
  for (auto& [key, e] : entries_) close_entry(e);
  entries_.clear();
}

CgroupFileCache::Result CgroupFileCache::fail(const std::string& dir, const char* name, int err) {
  error_.assign(dir).append("/").append(name).append(": ").append(std::strerror(err));
  return Result::kFailed;
}

CgroupFileCache::Result CgroupFileCache::read(Entry& entry, CgroupFile file, const std::string& dir,
                                              const char* name) {
  int& fd = entry.fds[static_cast<std::size_t>(file)];
  if (fd == Entry::kMissing) return Result::kMissing;
  if (fd == Entry::kNotOpen) {
    if (open_files_ >= max_open_files_) return read_once(dir, name);
    path_.assign(dir).append("/").append(name);
    fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      fd = Entry::kNotOpen;
      if (!is_missing(err)) return fail(dir, name, err);
      // ENOENT: not in this cgroup, remembered. ENODEV: the cgroup is being removed, and a new
      // one may take its name: not remembered.
      if (err == ENOENT) fd = Entry::kMissing;
      return Result::kMissing;
    }
    ++open_files_;
  }
  const Result r = read_descriptor(fd, dir, name);
  if (r == Result::kGone) {
    // The cgroup these descriptors belong to is gone (perhaps made again under its name):
    // every file of the entry is opened afresh next time.
    close_entry(entry);
  } else if (r != Result::kOk) {
    ::close(fd);  // whatever went wrong, the next sample opens the file afresh
    --open_files_;
    fd = Entry::kNotOpen;
  }
  return r;
}

CgroupFileCache::Result CgroupFileCache::read_descriptor(int fd, const std::string& dir, const char* name) {
  // Every cgroup file is generated in one piece, so a read shorter than the buffer is the end.
  std::size_t used = 0;
  for (;;) {
    if (used == buffer_.size()) {
      if (buffer_.size() >= KernelFile::kMaxBytes) {
        error_.assign(dir).append("/").append(name).append(": larger than ").append(
            std::to_string(KernelFile::kMaxBytes)).append(" bytes");
        return Result::kFailed;
      }
      buffer_.resize(buffer_.size() * 2);
    }
    const ssize_t n = ::pread(fd, buffer_.data() + used, buffer_.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == ENODEV) return Result::kGone;
      return fail(dir, name, err);
    }
    const bool short_read = static_cast<std::size_t>(n) < buffer_.size() - used;
    used += static_cast<std::size_t>(n);
    if (n == 0 || short_read) break;
  }
  content_ = std::string_view(buffer_.data(), used);
  return Result::kOk;
}

CgroupFileCache::Result CgroupFileCache::read_once(const std::string& dir, const char* name) {
  path_.assign(dir).append("/").append(name);
  bool missing = false;
  auto text = read_file_once(path_, buffer_, &missing);
  if (!text) {
    if (missing) return Result::kMissing;
    error_ = text.error().message;
    return Result::kFailed;
  }
  content_ = *text;
  return Result::kOk;
}

}  // namespace memdiag
