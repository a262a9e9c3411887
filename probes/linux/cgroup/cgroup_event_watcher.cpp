// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_event_watcher.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>

#include "probes/linux/flat_keyed_parser.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {
namespace {

constexpr std::size_t kSignals = 4;  // low, medium, critical, oom
constexpr std::uint64_t kWakeTag = ~std::uint64_t{0};
constexpr std::uint64_t kInotifyTag = ~std::uint64_t{0} - 1;

// "<what>: <errno text>", without the cgroup's path: the reason a cgroup cannot be watched is
// one text for all of them (the log says it once).
Error failed(const char* what, int error) { return make_error(std::string(what) + ": " + std::strerror(error)); }

// Writes "<event fd> <control fd> [args]" to cgroup.event_control (cgroup-v1/memory.rst).
Status register_event(const std::string& dir, int event_fd, const char* control, const char* args) {
  const int control_fd = ::open((dir + "/" + control).c_str(), O_RDONLY | O_CLOEXEC);
  if (control_fd < 0) return failed(control, errno);
  Status result = Ok{};
  const int event_control = ::open((dir + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
  if (event_control >= 0) {
    std::string line = std::to_string(event_fd) + " " + std::to_string(control_fd);
    if (args) line += std::string(" ") + args;
    if (::write(event_control, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      result = failed("writing cgroup.event_control", errno);
    }
    ::close(event_control);
  } else {
    result = failed("cgroup.event_control", errno);
  }
  ::close(control_fd);  // the kernel resolved it at registration; only the eventfd stays
  return result;
}

bool directory_is_gone(const std::string& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace

struct CgroupEventWatcher::Registration {
  std::string dir;
  std::uint64_t id = 0;
  std::array<int, kSignals> fds{-1, -1, -1, -1};  // v1
  // v1: rmdir signals each eventfd once more (memcg_event_remove); that one is taken off the
  // first value read after the directory is gone, whether it came with a real notification or
  // alone, so a real OOM read in the same value is still counted.
  std::array<bool, kSignals> removal_discounted{false, false, false, false};
  // Adds its OOMs to the node-wide total: no ancestor of it is watched (see watch()).
  bool top_most = true;
  int inotify_fd = -1;                            // v2: the watcher's, and the watch on memory.events
  int wd = -1;
  std::optional<std::uint64_t> last_oom;  // v2: memory.events "oom" at the last read
  bool read_pending = false;
  std::chrono::steady_clock::time_point next_read{};
  CgroupNotifications counts;

  ~Registration() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);  // closing the eventfd also unregisters it in the kernel
    }
    if (wd >= 0) ::inotify_rm_watch(inotify_fd, wd);  // fails harmlessly if the cgroup is gone
  }
};

CgroupEventWatcher::CgroupEventWatcher(Kind kind, std::chrono::milliseconds debounce)
    : kind_(kind), debounce_(debounce) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (kind_ == Kind::kV2Inotify) inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  const bool ready = epoll_fd_ >= 0 && wake_fd_ >= 0 && (kind_ == Kind::kV1Eventfd || inotify_fd_ >= 0);
  if (!ready) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  if (inotify_fd_ >= 0) {
    ev.data.u64 = kInotifyTag;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, inotify_fd_, &ev);
  }
  thread_ = std::thread([this] { run(); });
}

CgroupEventWatcher::~CgroupEventWatcher() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  registrations_.clear();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Expected<std::unique_ptr<CgroupEventWatcher::Registration>> CgroupEventWatcher::register_dir(const std::string& dir) {
  auto reg = std::make_unique<Registration>();
  reg->dir = dir;
  reg->id = next_id_++;
  return kind_ == Kind::kV1Eventfd ? register_v1(std::move(reg)) : register_v2(std::move(reg));
}

Expected<std::unique_ptr<CgroupEventWatcher::Registration>> CgroupEventWatcher::register_v1(
    std::unique_ptr<Registration> reg) {
  static constexpr const char* kLevels[] = {"low", "medium", "critical"};
  for (std::size_t i = 0; i < kSignals; ++i) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return failed("eventfd", errno);
    reg->fds[i] = fd;
    Status registered = i < 3 ? register_event(reg->dir, fd, "memory.pressure_level", kLevels[i])
                              : register_event(reg->dir, fd, "memory.oom_control", nullptr);
    if (!registered) return registered.error();
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.u64 = reg->id * kSignals + i;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return failed("epoll_ctl", errno);
  }
  return reg;
}

Expected<std::unique_ptr<CgroupEventWatcher::Registration>> CgroupEventWatcher::register_v2(
    std::unique_ptr<Registration> reg) {
  reg->counts.has_pressure_levels = false;
  reg->inotify_fd = inotify_fd_;
  reg->wd = ::inotify_add_watch(inotify_fd_, (reg->dir + "/memory.events").c_str(), IN_MODIFY);
  if (reg->wd < 0) {
    // ENOSPC is the per-user limit on inotify watches, shared with everything the user runs.
    return errno == ENOSPC ? failed("inotify watch on memory.events (fs.inotify.max_user_watches)", ENOSPC)
                           : failed("inotify watch on memory.events", errno);
  }
  take_v2(*reg);  // the baseline: counting starts now
  if (!reg->last_oom) return make_error("memory.events has no readable oom counter");  // nothing to count
  return reg;
}

void CgroupEventWatcher::watch(const std::vector<std::string>& dirs) {
  if (!thread_.joinable()) return;
  // All under the lock: the thread must never see an event of a registration it cannot find,
  // or the one-shot descriptor would never be re-armed.
  std::lock_guard lock(mutex_);
  std::map<std::string, std::unique_ptr<Registration>> next;
  std::string unwatchable_reason;
  for (const auto& dir : dirs) {
    auto it = registrations_.find(dir);
    // A v2 registration whose memory.events went away (wd -1) is made again.
    if (it != registrations_.end() && !(kind_ == Kind::kV2Inotify && it->second->wd < 0)) {
      next.emplace(dir, std::move(it->second));
      continue;
    }
    // A v2 cgroup without memory.events has nothing to watch: the root (nothing limits it, so
    // the kernel gives it no events file) or a cgroup whose parent does not enable the memory
    // controller. Neither is a watch that failed.
    if (kind_ == Kind::kV2Inotify && ::access((dir + "/memory.events").c_str(), F_OK) != 0 && errno == ENOENT) {
      continue;
    }
    auto reg = register_dir(dir);
    if (reg) {
      next.emplace(dir, std::move(reg).value());
    } else if (unwatchable_reason.empty() && !directory_is_gone(dir)) {
      // A cgroup removed since it was listed is churn, not a reason.
      unwatchable_reason = reg.error().message;
    }
  }
  registrations_ = std::move(next);  // the rest close their eventfds (epoll forgets closed descriptors)
  for (auto& [dir, reg] : registrations_) reg->top_most = watched_ancestor(dir) == nullptr;
  unwatchable_reason_ = std::move(unwatchable_reason);
}

std::string CgroupEventWatcher::unwatchable_reason() const {
  std::lock_guard lock(mutex_);
  return unwatchable_reason_;
}

CgroupEventWatcher::Registration* CgroupEventWatcher::watched_ancestor(const std::string& dir) const {
  for (auto slash = dir.rfind('/'); slash != std::string::npos && slash > 0; slash = dir.rfind('/', slash - 1)) {
    auto it = registrations_.find(dir.substr(0, slash));
    if (it != registrations_.end()) return it->second.get();
  }
  return nullptr;
}

std::optional<CgroupNotifications> CgroupEventWatcher::counts(const std::string& dir) const {
  std::lock_guard lock(mutex_);
  auto it = registrations_.find(dir);
  if (it == registrations_.end()) return std::nullopt;
  return it->second->counts;
}

std::size_t CgroupEventWatcher::watched() const {
  std::lock_guard lock(mutex_);
  return registrations_.size();
}

std::uint64_t CgroupEventWatcher::oom_total() const {
  std::lock_guard lock(mutex_);
  return oom_total_;
}

CgroupEventWatcher::Registration* CgroupEventWatcher::find(std::uint64_t id) {
  for (auto& [dir, reg] : registrations_) {
    if (reg->id == id) return reg.get();
  }
  return nullptr;
}

std::uint64_t CgroupEventWatcher::take_v1(Registration& reg, std::size_t signal) {
  std::uint64_t value = 0;
  if (::read(reg.fds[signal], &value, sizeof value) != sizeof value) return 0;
  // rmdir of a watched cgroup signals its eventfds once: not an event. Only that one is dropped:
  // an OOM signalled just before the removal adds to the same counter and is kept.
  struct stat st{};
  if (::stat(reg.dir.c_str(), &st) != 0 && !reg.removal_discounted[signal]) {
    reg.removal_discounted[signal] = true;
    if (value > 0) --value;
  }
  if (signal < 3) {
    reg.counts.pressure[signal] += value;
  } else {
    reg.counts.oom += value;  // the node-wide total is counted over the whole wake-up in run()
  }
  return value;
}

void CgroupEventWatcher::count_v1_ooms(const std::map<const Registration*, std::uint64_t>& ooms) {
  // The kernel signals an OOM to the memcg under OOM and to every descendant of it
  // (mem_cgroup_oom_notify walks the subtree), all in one go, so they arrive in the same wake-up.
  // Of a cgroup whose nearest signalled watched ancestor was signalled too, only the
  // notifications beyond the ancestor's are its own: a (1) and a/b (1) is one OOM, in a;
  // a (1) and a/b (2) is one in a and one in a/b.
  for (const auto& [reg, value] : ooms) {
    std::uint64_t inherited = 0;
    for (auto slash = reg->dir.rfind('/'); slash != std::string::npos && slash > 0;
         slash = reg->dir.rfind('/', slash - 1)) {
      auto it = registrations_.find(reg->dir.substr(0, slash));
      if (it == registrations_.end()) continue;
      auto fired = ooms.find(it->second.get());
      if (fired == ooms.end()) continue;
      inherited = fired->second;
      break;
    }
    if (value > inherited) oom_total_ += value - inherited;
  }
}

void CgroupEventWatcher::take_v2(Registration& reg) {
  std::string buffer;
  auto text = read_file_once(reg.dir + "/memory.events", buffer);
  if (!text) return;  // removed meanwhile: the last count stands
  std::vector<KeyedValue> keyed;
  if (!parse_flat_keyed(*text, keyed)) return;
  for (const auto& kv : keyed) {
    if (kv.name != "oom") continue;
    if (reg.last_oom && kv.value > *reg.last_oom) {
      reg.counts.oom += kv.value - *reg.last_oom;
      // memory.events is hierarchical: an OOM in a/b counts in b and in a. Only the top-most
      // watched cgroups add to the total, so each OOM adds once, and one in a descendant removed
      // before it was read still adds through its ancestor, whose count the kernel keeps.
      if (reg.top_most) oom_total_ += kv.value - *reg.last_oom;
    }
    reg.last_oom = kv.value;
  }
}

void CgroupEventWatcher::drain_inotify(Clock::time_point now, std::multimap<Clock::time_point, std::uint64_t>& due) {
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
    if (n <= 0) return;
    for (const char* p = buffer; p < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + event->len;
      // Overflow: some notification was lost, read them all.
      const bool everyone = (event->mask & IN_Q_OVERFLOW) != 0;
      for (auto& [dir, reg] : registrations_) {
        if (!everyone && reg->wd != event->wd) continue;
        if (event->mask & IN_IGNORED) {
          // memory.events is gone (its cgroup removed, perhaps made again under the same
          // name): the next watch() registers the path afresh.
          reg->wd = -1;
          break;
        }
        // Read at once, or when the last read is a debounce interval old; one read covers
        // every notification until then.
        if (!reg->read_pending) {
          reg->read_pending = true;
          due.emplace(std::max(now, reg->next_read), reg->id * kSignals);
        }
        if (!everyone) break;
      }
    }
  }
}

void CgroupEventWatcher::run() {
  // What to do when: v1, re-arm a one-shot eventfd; v2, read a memory.events.
  std::multimap<Clock::time_point, std::uint64_t> due;
  for (;;) {
    int timeout_ms = -1;
    if (!due.empty()) {
      const auto wait = due.begin()->first - Clock::now();
      timeout_ms = static_cast<int>(std::max<long long>(0, std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
    }
    epoll_event events[64];
    const int n = ::epoll_wait(epoll_fd_, events, 64, timeout_ms);
    if (n < 0 && errno != EINTR) return;
    const auto now = Clock::now();
    std::lock_guard lock(mutex_);
    std::map<const Registration*, std::uint64_t> ooms;  // v1: OOM notifications of this wake-up
    for (int e = 0; e < n; ++e) {
      const std::uint64_t tag = events[e].data.u64;
      if (tag == kWakeTag) return;
      if (tag == kInotifyTag) {
        drain_inotify(now, due);
        continue;
      }
      if (Registration* reg = find(tag / kSignals)) {
        const std::uint64_t value = take_v1(*reg, tag % kSignals);
        if (tag % kSignals == 3) ooms[reg] += value;
        due.emplace(now + debounce_, tag);
      }
    }
    count_v1_ooms(ooms);
    while (!due.empty() && due.begin()->first <= now) {
      const std::uint64_t tag = due.begin()->second;
      due.erase(due.begin());
      Registration* reg = find(tag / kSignals);
      if (reg == nullptr) continue;  // no longer watched
      if (kind_ == Kind::kV2Inotify) {
        reg->read_pending = false;
        take_v2(*reg);
        reg->next_read = now + debounce_;
        continue;
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLONESHOT;
      ev.data.u64 = tag;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, reg->fds[tag % kSignals], &ev);
    }
  }
}

}  // namespace memdiag
