// Event-driven cgroup v1 memory signals: memory.pressure_level (low, medium, critical) and
// memory.oom_control notifications through eventfds registered in cgroup.event_control, read
// by a thread of its own so no notification between two samples is missed. Debounced the
// cheap way: after a notification the thread leaves that eventfd alone for a while (the kernel
// keeps adding to its counter meanwhile), so an OOM loop firing "critical" thousands of times
// per second costs at most ten wake-ups per second and loses no count.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probes/core/cgroup_section.hpp"

namespace memdiag {

class CgroupEventWatcher {
 public:
  explicit CgroupEventWatcher(std::chrono::milliseconds debounce = std::chrono::milliseconds(100));
  ~CgroupEventWatcher();
  CgroupEventWatcher(const CgroupEventWatcher&) = delete;
  CgroupEventWatcher& operator=(const CgroupEventWatcher&) = delete;

  // Makes the watched set exactly `dirs` (v1 memory cgroup directories): registers new ones,
  // drops the others. Errors (no cgroup.event_control, descriptors exhausted) leave that
  // cgroup unwatched; the count of watched cgroups says so.
  void watch(const std::vector<std::string>& dirs);

  // Notifications counted so far for `dir`; nullopt if it is not watched.
  std::optional<CgroupNotifications> counts(const std::string& dir) const;

  std::size_t watched() const;

 private:
  struct Registration;
  void run();
  std::unique_ptr<Registration> register_dir(const std::string& dir);

  const std::chrono::milliseconds debounce_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that tells the thread to stop
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Registration>> registrations_;
  std::thread thread_;
};

}  // namespace memdiag
