#include "probes/linux/cgroup_event_watcher.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace memdiag {
namespace {

constexpr std::size_t kSignals = 4;  // low, medium, critical, oom
constexpr std::uint64_t kWakeTag = ~std::uint64_t{0};

// Writes "<event fd> <control fd> [args]" to cgroup.event_control (cgroup-v1/memory.rst).
bool register_event(const std::string& dir, int event_fd, const char* control, const char* args) {
  const int control_fd = ::open((dir + "/" + control).c_str(), O_RDONLY | O_CLOEXEC);
  if (control_fd < 0) return false;
  const int event_control = ::open((dir + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = false;
  if (event_control >= 0) {
    std::string line = std::to_string(event_fd) + " " + std::to_string(control_fd);
    if (args) line += std::string(" ") + args;
    ok = ::write(event_control, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(event_control);
  }
  ::close(control_fd);  // the kernel resolved it at registration; only the eventfd stays
  return ok;
}

}  // namespace

struct CgroupEventWatcher::Registration {
  std::string dir;
  std::uint64_t id = 0;
  std::array<int, kSignals> fds{-1, -1, -1, -1};
  CgroupNotifications counts;

  ~Registration() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);  // closing the eventfd also unregisters it in the kernel
    }
  }
};

CgroupEventWatcher::CgroupEventWatcher(std::chrono::milliseconds debounce) : debounce_(debounce) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ >= 0 && wake_fd_ >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeTag;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
    thread_ = std::thread([this] { run(); });
  }
}

CgroupEventWatcher::~CgroupEventWatcher() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  registrations_.clear();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

std::unique_ptr<CgroupEventWatcher::Registration> CgroupEventWatcher::register_dir(const std::string& dir) {
  static std::uint64_t next_id = 1;  // only touched under mutex_
  auto reg = std::make_unique<Registration>();
  reg->dir = dir;
  reg->id = next_id++;
  static constexpr const char* kLevels[] = {"low", "medium", "critical"};
  for (std::size_t i = 0; i < kSignals; ++i) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return nullptr;
    reg->fds[i] = fd;
    const bool ok = i < 3 ? register_event(dir, fd, "memory.pressure_level", kLevels[i])
                          : register_event(dir, fd, "memory.oom_control", nullptr);
    if (!ok) return nullptr;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.u64 = reg->id * kSignals + i;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return nullptr;
  }
  return reg;
}

void CgroupEventWatcher::watch(const std::vector<std::string>& dirs) {
  if (epoll_fd_ < 0) return;
  // All under the lock: the thread must never see an event of a registration it cannot find,
  // or the one-shot descriptor would never be re-armed.
  std::lock_guard lock(mutex_);
  std::map<std::string, std::unique_ptr<Registration>> next;
  for (const auto& dir : dirs) {
    auto it = registrations_.find(dir);
    if (it != registrations_.end()) {
      next.emplace(dir, std::move(it->second));
    } else if (auto reg = register_dir(dir)) {
      next.emplace(dir, std::move(reg));
    }
  }
  registrations_ = std::move(next);  // the rest close their eventfds (epoll forgets closed descriptors)
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

void CgroupEventWatcher::run() {
  struct Rearm {
    std::chrono::steady_clock::time_point at;
    std::uint64_t tag;
  };
  std::deque<Rearm> rearm;  // in time order: every entry waits the same debounce
  for (;;) {
    int timeout_ms = -1;
    if (!rearm.empty()) {
      const auto wait = rearm.front().at - std::chrono::steady_clock::now();
      timeout_ms = static_cast<int>(std::max<long long>(0, std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
    }
    epoll_event events[64];
    const int n = ::epoll_wait(epoll_fd_, events, 64, timeout_ms);
    if (n < 0 && errno != EINTR) return;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    for (int e = 0; e < n; ++e) {
      const std::uint64_t tag = events[e].data.u64;
      if (tag == kWakeTag) return;
      for (auto& [dir, reg] : registrations_) {
        if (reg->id != tag / kSignals) continue;
        const std::size_t signal = tag % kSignals;
        std::uint64_t value = 0;
        if (::read(reg->fds[signal], &value, sizeof value) == sizeof value) {
          // rmdir of a watched cgroup signals its eventfds once: not a pressure event.
          struct stat st{};
          if (::stat(dir.c_str(), &st) == 0) {
            if (signal < 3) {
              reg->counts.pressure[signal] += value;
            } else {
              reg->counts.oom += value;
            }
          }
        }
        rearm.push_back(Rearm{now + debounce_, tag});
        break;
      }
    }
    while (!rearm.empty() && rearm.front().at <= now) {
      const std::uint64_t tag = rearm.front().tag;
      rearm.pop_front();
      for (auto& [dir, reg] : registrations_) {
        if (reg->id != tag / kSignals) continue;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLONESHOT;
        ev.data.u64 = tag;
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, reg->fds[tag % kSignals], &ev);
        break;
      }
    }
  }
}

}  // namespace memdiag
