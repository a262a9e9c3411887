// SPDX-License-Identifier: Apache-2.0
// Kills by userspace OOM killers, caught as the killer marks the cgroup. systemd-oomd and oomd
// write their marks (oomd_marks.hpp) on a cgroup's directory around the kill, and systemd
// removes a killed transient unit's cgroup within milliseconds, long before the next sample
// could read them. So a thread of its own watches every discovered cgroup directory for
// attribute changes (inotify IN_ATTRIB: setxattr notifies it) and reads the marks at once;
// each increase is kept as a kill record that outlives the cgroup, in a bounded ring that the
// diagnosis reads by sequence number, as it reads eBPF's ring of OOM victims.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "probes/core/cgroup_section.hpp"

namespace memdiag {

class OomdMarkWatcher {
 public:
  OomdMarkWatcher();
  ~OomdMarkWatcher();
  OomdMarkWatcher(const OomdMarkWatcher&) = delete;
  OomdMarkWatcher& operator=(const OomdMarkWatcher&) = delete;

  // Makes the watched set exactly `paths` (cgroup paths under `root`, as discovered): new ones
  // start from the marks they carry now (a kill before memdiag watched is not a new one).
  void watch(const std::string& root, const std::vector<std::string>& paths);

  // Whether kills are being caught: the thread runs and no watch failed. When false,
  // unwatchable_reason() says why (inotify unavailable, fs.inotify.max_user_watches).
  bool working() const;
  std::string unwatchable_reason() const;
  std::size_t watched() const;

  // The last CgroupSection::kMaxUserspaceOomKills kills seen, oldest first.
  std::vector<UserspaceOomKill> recent() const;

 private:
  struct Watched {
    std::string path;
    std::uint64_t user = 0;     // the marks as last read
    std::uint64_t trusted = 0;
  };
  void run();
  // Reads the marks of a watched directory and records what rose; under mutex_.
  void read_marks(Watched& w);

  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  int epoll_fd_ = -1;
  mutable std::mutex mutex_;
  std::string root_;                       // under mutex_
  std::map<int, Watched> by_descriptor_;   // inotify watch descriptor -> cgroup; under mutex_
  std::map<std::string, int> by_path_;     // under mutex_
  std::vector<UserspaceOomKill> recent_;   // under mutex_
  std::uint64_t sequence_ = 0;             // under mutex_
  std::string unwatchable_reason_;         // under mutex_
  std::thread thread_;
};

}  // namespace memdiag
