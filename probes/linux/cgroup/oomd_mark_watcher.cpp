// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/oomd_mark_watcher.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "probes/linux/cgroup/oomd_marks.hpp"

namespace memdiag {

OomdMarkWatcher::OomdMarkWatcher() {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inotify_fd_ < 0 || wake_fd_ < 0) {
    unwatchable_reason_ = std::string("inotify: ") + std::strerror(errno);
    return;
  }
  thread_ = std::thread([this] { run(); });
}

OomdMarkWatcher::~OomdMarkWatcher() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) ::close(inotify_fd_);  // drops every watch
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void OomdMarkWatcher::watch(const std::string& root, const std::vector<std::string>& paths) {
  if (!thread_.joinable()) return;
  std::lock_guard lock(mutex_);
  if (root != root_) {
    for (const auto& [wd, w] : by_descriptor_) ::inotify_rm_watch(inotify_fd_, wd);
    by_descriptor_.clear();
    by_path_.clear();
    root_ = root;
  }
  const std::set<std::string> wanted(paths.begin(), paths.end());
  for (auto it = by_path_.begin(); it != by_path_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    ::inotify_rm_watch(inotify_fd_, it->second);
    by_descriptor_.erase(it->second);
    it = by_path_.erase(it);
  }
  std::string reason;
  for (const std::string& path : wanted) {
    if (by_path_.count(path)) continue;
    const std::string dir = path == "/" ? root : root + path;
    const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), IN_ATTRIB | IN_ONLYDIR);
    if (wd < 0) {
      // Removed since it was listed: churn. ENOSPC: the per-user limit on inotify watches.
      if (errno != ENOENT && reason.empty()) {
        reason = errno == ENOSPC ? "inotify watch (fs.inotify.max_user_watches): " + std::string(std::strerror(ENOSPC))
                                 : "inotify watch: " + std::string(std::strerror(errno));
      }
      continue;
    }
    Watched w{path, 0, 0};
    CgroupSample marks;
    read_oomd_marks(dir, marks);  // the baseline: kills before now are not new
    w.user = marks.oomd_user_kills.value_or(0);
    w.trusted = marks.oomd_trusted_kills.value_or(0);
    by_descriptor_[wd] = std::move(w);
    by_path_[path] = wd;
  }
  unwatchable_reason_ = std::move(reason);
}

bool OomdMarkWatcher::working() const {
  std::lock_guard lock(mutex_);
  return thread_.joinable() && unwatchable_reason_.empty();
}

std::string OomdMarkWatcher::unwatchable_reason() const {
  std::lock_guard lock(mutex_);
  return unwatchable_reason_;
}

std::size_t OomdMarkWatcher::watched() const {
  std::lock_guard lock(mutex_);
  return by_descriptor_.size();
}

std::vector<UserspaceOomKill> OomdMarkWatcher::recent() const {
  std::lock_guard lock(mutex_);
  return recent_;
}

void OomdMarkWatcher::read_marks(Watched& w) {
  CgroupSample marks;
  read_oomd_marks(w.path == "/" ? root_ : root_ + w.path, marks);
  const std::uint64_t user = marks.oomd_user_kills.value_or(w.user);
  const std::uint64_t trusted = marks.oomd_trusted_kills.value_or(w.trusted);
  auto record = [&](std::uint64_t count, bool is_trusted) {
    recent_.push_back(UserspaceOomKill{++sequence_, w.path, count, is_trusted});
    if (recent_.size() > CgroupSection::kMaxUserspaceOomKills) recent_.erase(recent_.begin());
  };
  if (trusted > w.trusted) {
    // Newer oomd marks both namespaces, one attribute at a time: a user.* kill just recorded
    // for this cgroup was the same kill, and is oomd's.
    if (!recent_.empty() && recent_.back().cgroup == w.path && !recent_.back().trusted &&
        recent_.back().count == trusted - w.trusted) {
      recent_.back().trusted = true;
    } else {
      record(trusted - w.trusted, true);
    }
  } else if (user > w.user && trusted == 0) {
    record(user - w.user, false);
  }
  w.user = user;
  w.trusted = trusted;
}

void OomdMarkWatcher::run() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents & POLLIN) return;
    for (;;) {
      const ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      std::lock_guard lock(mutex_);
      for (const char* p = buffer; p < buffer + n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(p);
        p += sizeof(inotify_event) + event->len;
        if (event->mask & IN_Q_OVERFLOW) {
          // Some change was lost: read every cgroup still there.
          for (auto& [wd, w] : by_descriptor_) read_marks(w);
          continue;
        }
        auto it = by_descriptor_.find(event->wd);
        if (it == by_descriptor_.end()) continue;
        if (event->mask & IN_IGNORED) {  // the cgroup was removed: its kills are in recent_
          if (auto path = by_path_.find(it->second.path); path != by_path_.end() && path->second == event->wd) {
            by_path_.erase(path);
          }
          by_descriptor_.erase(it);
          continue;
        }
        if (event->mask & IN_ATTRIB) read_marks(it->second);
      }
    }
  }
}

}  // namespace memdiag
