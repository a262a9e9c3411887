// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/kernel_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace memdiag {

KernelFile::KernelFile(std::string path, Reads reads, std::size_t initial_capacity)
    : path_(std::move(path)), reads_(reads) {
  buffer_.resize(std::max<std::size_t>(16, initial_capacity));
}

KernelFile::~KernelFile() { close_descriptor(); }

KernelFile::KernelFile(KernelFile&& other) noexcept
    : path_(std::move(other.path_)),
      reads_(other.reads_),
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)) {}

KernelFile& KernelFile::operator=(KernelFile&& other) noexcept {
  if (this != &other) {
    close_descriptor();
    path_ = std::move(other.path_);
    reads_ = other.reads_;
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

void KernelFile::close_descriptor() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool KernelFile::exists() const {
  struct stat st;
  return ::stat(path_.c_str(), &st) == 0;
}

Expected<std::string_view> KernelFile::read() {
  const bool was_open = fd_ >= 0;
  auto content = read_open_descriptor();
  if (!content && was_open) {
    // A descriptor kept from an earlier sample may point at a replaced file; retry fresh.
    close_descriptor();
    content = read_open_descriptor();
  }
  return content;
}

Expected<std::string_view> KernelFile::read_open_descriptor() {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return make_error(path_ + ": " + std::strerror(errno));
  }
  std::size_t used = 0;
  for (;;) {
    if (used == buffer_.size()) {
      if (buffer_.size() >= kMaxBytes) {
        close_descriptor();
        return make_error(path_ + ": larger than " + std::to_string(kMaxBytes) + " bytes");
      }
      buffer_.resize(buffer_.size() * 2);
    }
    const ssize_t n = ::pread(fd_, buffer_.data() + used, buffer_.size() - used, static_cast<off_t>(used));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close_descriptor();
      return make_error(path_ + ": " + std::strerror(err));
    }
    if (n == 0) break;
    const bool short_read = static_cast<std::size_t>(n) < buffer_.size() - used;
    used += static_cast<std::size_t>(n);
    if (short_read && reads_ == Reads::kOneRecord) break;
  }
  return std::string_view(buffer_.data(), used);
}

Expected<std::string_view> read_file_once(const std::string& path, std::string& buffer, bool* missing) {
  if (missing) *missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // ENODEV: the cgroup is being removed right now (kernfs node deactivated).
    if (missing) *missing = errno == ENOENT || errno == ENODEV;
    return make_error(path + ": " + std::strerror(errno));
  }
  if (buffer.size() < 4096) buffer.resize(4096);
  std::size_t used = 0;
  for (;;) {
    if (used == buffer.size()) {
      if (buffer.size() >= KernelFile::kMaxBytes) {
        ::close(fd);
        return make_error(path + ": larger than " + std::to_string(KernelFile::kMaxBytes) + " bytes");
      }
      buffer.resize(buffer.size() * 2);
    }
    const ssize_t n = ::read(fd, buffer.data() + used, buffer.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      if (missing) *missing = err == ENOENT || err == ENODEV;  // cgroup removed mid-read
      return make_error(path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return std::string_view(buffer.data(), used);
}

}  // namespace memdiag
