// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_tree_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memdiag {
namespace {

// Directory events only: users cannot create files in a cgroup hierarchy, and the kernel
// creates a cgroup's control files without notifying anyone.
// IN_ATTRIB on the directory itself: an extended attribute was set on the cgroup (a userspace
// OOM killer's mark, oomd_marks.hpp); not a change of the tree.
constexpr std::uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR;

}  // namespace

CgroupTreeWatch::CgroupTreeWatch() {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) unwatched_reason_ = std::string("inotify_init1: ") + std::strerror(errno);
}

CgroupTreeWatch::~CgroupTreeWatch() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

void CgroupTreeWatch::forget_watches() {
  for (const auto& [wd, path] : watch_paths_) ::inotify_rm_watch(inotify_fd_, wd);
  watch_paths_.clear();
  drain_events();  // the IN_IGNORED events the removals queued
}

bool CgroupTreeWatch::drain_events() {
  if (inotify_fd_ < 0) return true;
  bool changed = false;
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) changed = true;  // cannot tell: assume the worst
      break;
    }
    if (n == 0) break;
    for (const char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      if (event->mask & IN_Q_OVERFLOW) changed = true;
      if (event->mask & IN_ATTRIB) {
        // The directory itself (no name), or a child directory as its parent's watch sees it.
        if (const auto it = watch_paths_.find(event->wd); it != watch_paths_.end()) {
          attributes_changed_.insert(event->len == 0 ? it->second : it->second + "/" + event->name);
        }
      } else if (event->mask & IN_ISDIR) {
        changed = true;
      }
      if (event->mask & IN_IGNORED) {
        changed = true;  // the directory is gone (or unmounted)
        watch_paths_.erase(event->wd);
      }
      p += sizeof(inotify_event) + event->len;
    }
  }
  return changed;
}

void CgroupTreeWatch::watch_directory(const std::string& dir) {
  if (inotify_fd_ < 0) return;
  // Added again at every walk, since walks are rare: the same directory gets the same
  // descriptor back, a directory removed and made again under the same name (or a rename) a
  // new one. A removed directory's IN_IGNORED can come late (while anything still holds it).
  const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
  if (wd < 0) {
    // ENOENT: removed meanwhile, the parent's watch says so. Anything else (ENOSPC: the
    // fs.inotify.max_user_watches limit) leaves part of the tree unwatched.
    if (errno != ENOENT) unwatched_reason_ = "inotify_add_watch " + dir + ": " + std::strerror(errno);
    return;
  }
  watch_paths_[wd] = dir;
  seen_in_walk_.insert(wd);
}

const std::vector<DiscoveredCgroup>& CgroupTreeWatch::cgroups(const std::string& root,
                                                               const CgroupDiscoveryOptions& options) {
  if (root != root_ || !(options == options_)) {
    if (inotify_fd_ >= 0) forget_watches();
    root_ = root;
    options_ = options;
    stale_ = true;
  }
  attributes_changed_.clear();
  if (drain_events()) stale_ = true;
  if (!stale_ && unwatched_reason_.empty()) return cgroups_;

  if (inotify_fd_ >= 0) unwatched_reason_.clear();
  seen_in_walk_.clear();
  cgroups_ = discover_cgroups(root_, options_, [this](const std::string& dir) { watch_directory(dir); });
  // Events that arrived during the walk mark the next call stale again: nothing is missed.
  stale_ = false;
  ++walks_;
  // Watches of directories this walk did not list (gone, renamed, beyond a new depth).
  for (auto it = watch_paths_.begin(); it != watch_paths_.end();) {
    if (seen_in_walk_.count(it->first) == 0) {
      ::inotify_rm_watch(inotify_fd_, it->first);
      it = watch_paths_.erase(it);
    } else {
      ++it;
    }
  }
  return cgroups_;
}

}  // namespace memdiag
