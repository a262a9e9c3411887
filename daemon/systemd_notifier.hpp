// SPDX-License-Identifier: Apache-2.0
// memdiagd under systemd (deploy/systemd/memdiagd.service, Type=notify): what the
// service manager hears, through libsystemd's sd_notify.
//   - READY=1 after the first sample, not at start: until then /metrics has nothing to say.
//   - WATCHDOG=1 after every sample, from the sampler's thread: a sampler stuck in a kernel read
//     stops the pings, and WatchdogSec restarts the daemon (so WatchdogSec must be at least
//     twice sampler.interval; the daemon warns at start when it is not).
//   - STATUS= one line with the verdicts and the sources (systemctl status shows it), sent
//     when it changes.
//   - RELOADING=1 with MONOTONIC_USEC on SIGHUP, READY=1 once the reload is done (whether the
//     new config was taken or refused), STOPPING=1 on SIGTERM/SIGINT.
// Without NOTIFY_SOCKET (not run by systemd) every call does nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "probes/core/snapshot.hpp"

namespace memdiag {

class SystemdNotifier {
 public:
  SystemdNotifier();  // reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID

  bool active() const { return active_; }
  // How often systemd expects a ping (WatchdogSec); nullopt without a watchdog.
  std::optional<std::chrono::microseconds> watchdog_interval() const { return watchdog_; }

  // After each sample, on the sampler's thread.
  void sampled(const Snapshot& snapshot);
  // Around a reload (SIGHUP). Before the first sample (never ready) neither says anything: a
  // READY=1 then would mark the unit active before it has anything to serve.
  void reloading();
  void reloaded();
  void stopping();

 private:
  void send(const std::string& message);

  bool active_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
  std::atomic<bool> ready_{false};
  std::string last_status_;  // the sampler's thread only
};

}  // namespace memdiag
