// SPDX-License-Identifier: Apache-2.0
// Event-driven cgroup memory signals, read by a thread of its own so that no notification
// between two samples is missed:
//   v1: memory.pressure_level (low, medium, critical) and memory.oom_control notifications
//       through eventfds registered in cgroup.event_control;
//   v2: memory.events, which the kernel notifies as modified (inotify IN_MODIFY) whenever one
//       of its counters moves; the thread reads it then and counts increments of "oom", so an
//       OOM is seen even if the cgroup is removed before the next sample (through the count of
//       a watched ancestor, which the kernel keeps, if it is removed before the read).
// Debounced the cheap way: after a notification the thread leaves that source alone for a
// while (v1: the eventfd counter keeps adding up meanwhile; v2: a file not read for that long is
// read at once, otherwise once at the end of the interval), so an OOM loop firing "critical" thousands of times per second costs at most ten
// wake-ups per second and loses no count.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probes/core/cgroup_section.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

class CgroupEventWatcher {
 public:
  enum class Kind { kV1Eventfd, kV2Inotify };

  explicit CgroupEventWatcher(Kind kind = Kind::kV1Eventfd,
                              std::chrono::milliseconds debounce = std::chrono::milliseconds(100));
  ~CgroupEventWatcher();
  CgroupEventWatcher(const CgroupEventWatcher&) = delete;
  CgroupEventWatcher& operator=(const CgroupEventWatcher&) = delete;

  // Makes the watched set exactly `dirs` (memory cgroup directories): registers new ones,
  // drops the others. Errors (no cgroup.event_control or memory.events, no permission to write
  // it, descriptors or inotify watches exhausted) leave that cgroup unwatched (it is tried again
  // on the next call); the count of watched cgroups and unwatchable_reason() say so.
  void watch(const std::vector<std::string>& dirs);

  // Why a cgroup of the last watch() could not be watched (the first such reason, e.g.
  // "cgroup.event_control: Permission denied"; never a cgroup's path), or empty when every one
  // was (cgroups removed meanwhile do not count).
  std::string unwatchable_reason() const;

  // Notifications counted so far for `dir`; nullopt if it is not watched.
  std::optional<CgroupNotifications> counts(const std::string& dir) const;

  std::size_t watched() const;
  // OOMs counted since the watcher started, each once, also those of cgroups no longer watched.
  // v2: increments of memory.events "oom" of the top-most watched cgroups (no watched ancestor).
  //   That counter is hierarchical (an OOM in a/b counts in b and a), so summing every watched
  //   cgroup would count one OOM once per watched ancestor. memory.events.local (5.2) would count
  //   it once too, but dies with its cgroup; the ancestor's count survives the removal of the
  //   descendant, so an OOM in a cgroup removed right after it (before it was read) still counts.
  //   Under the memory_localevents mount option memory.events is local and OOMs in watched
  //   descendants of a watched cgroup are not in the total.
  // v1: memory.oom_control notifications, which the kernel sends to the memcg under OOM and all
  //   its descendants; those of one wake-up are counted once (see count_v1_ooms). An OOM in an
  //   unwatched cgroup counts once per top-most watched cgroup below it.
  std::uint64_t oom_total() const;
  Kind kind() const { return kind_; }

 private:
  struct Registration;
  using Clock = std::chrono::steady_clock;
  void run();
  Expected<std::unique_ptr<Registration>> register_dir(const std::string& dir);
  Expected<std::unique_ptr<Registration>> register_v1(std::unique_ptr<Registration> reg);
  Expected<std::unique_ptr<Registration>> register_v2(std::unique_ptr<Registration> reg);
  Registration* find(std::uint64_t id);
  // v1: counts an eventfd's notifications. v2: reads memory.events and counts what moved.
  // Returns the notifications counted (v1 rmdir's own signal taken off).
  std::uint64_t take_v1(Registration& reg, std::size_t signal);
  void take_v2(Registration& reg);
  // v1: adds each OOM notified in one wake-up to the node-wide total once.
  void count_v1_ooms(const std::map<const Registration*, std::uint64_t>& ooms);
  // The nearest watched proper ancestor of `dir` (by path), or nullptr.
  Registration* watched_ancestor(const std::string& dir) const;
  void drain_inotify(Clock::time_point now, std::multimap<Clock::time_point, std::uint64_t>& due);

  const Kind kind_;
  const std::chrono::milliseconds debounce_;
  int epoll_fd_ = -1;
  int inotify_fd_ = -1;  // v2
  int wake_fd_ = -1;  // eventfd that tells the thread to stop
  mutable std::mutex mutex_;
  std::uint64_t next_id_ = 1;  // of registrations; under mutex_
  std::map<std::string, std::unique_ptr<Registration>> registrations_;
  std::uint64_t oom_total_ = 0;  // under mutex_
  std::string unwatchable_reason_;  // under mutex_
  std::thread thread_;
};

}  // namespace memdiag
