// SPDX-License-Identifier: Apache-2.0
// The daemon on Linux: signals are its control events (SIGTERM and SIGINT stop it, SIGHUP
// reloads), taken with sigwait in the main thread rather than in async handlers; under systemd
// it tells the service manager how it is doing (systemd_notifier.hpp).
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include <spdlog/spdlog.h>

#include "daemon/daemon.hpp"
#include "daemon/privileges/least_privilege.hpp"
#include "daemon/process_self.hpp"
#include "daemon/systemd_notifier.hpp"

namespace memdiag {
namespace {

sigset_t daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

// Cgroup event watching holds four eventfds per watched cgroup: lift the soft descriptor limit
// to the hard one, as daemons that watch many files do.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

ControlEvent next_signal() {
  const sigset_t set = daemon_signals();
  for (;;) {
    int signal_number = 0;
    if (sigwait(&set, &signal_number) != 0) continue;
    if (signal_number == SIGHUP) return {ControlEvent::Kind::kReload, "SIGHUP"};
    return {ControlEvent::Kind::kStop, signal_number == SIGTERM ? "SIGTERM" : "SIGINT"};
  }
}

}  // namespace

void block_daemon_signals() {
  const sigset_t set = daemon_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run_daemon(const CliOptions& options, Config config) {
  block_daemon_signals();  // before the first thread: every thread inherits the mask
  raise_descriptor_limit();
  // glibc gives every thread that allocates its own arena: with the 16 HTTP worker threads the
  // daemon once had rendering concurrently, RSS grew to ~18 MiB of mostly free heap. The
  // sampler, scanner, canary and HTTP threads still allocate; two arenas are plenty here.
  ::mallopt(M_ARENA_MAX, 2);
  // Under systemd (Type=notify): ready after the first sample, the watchdog petted by every
  // sample, a status line, reloads and the stop announced (systemd_notifier.hpp).
  SystemdNotifier systemd;
  ServeHooks hooks;
  // Memory locked and capabilities narrowed before any thread starts (docs/operations.md "Hardening").
  privileges::LeastPrivilege footing({.lock_memory = config.lock_memory,
                                      .drop_capabilities = config.drop_capabilities,
                                      .binds_privileged_port = privileges::binds_privileged_port(config.listen_address)});
  // After each sample, on the sampler's thread: never at scrape time.
  hooks.posture_after_sample = [&footing, self = std::make_shared<ProcessSelfReader>()](const Snapshot&) {
    auto posture = footing.posture();
    posture->process = self->read();
    return std::shared_ptr<const prom::DaemonPosture>(std::move(posture));
  };
  // Said once it serves, after the footing: a daemon that cannot bind its port says only that.
  const auto watchdog = systemd.active() ? systemd.watchdog_interval() : std::nullopt;
  const auto interval = config.interval;
  hooks.on_serving = [&footing, watchdog, interval] {
    footing.log_what_was_settled();
    if (watchdog && 2 * interval > *watchdog) {
      spdlog::warn("WatchdogSec ({} ms) is less than twice sampler.interval ({} ms): systemd may restart a healthy "
                   "daemon between two samples",
                   std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog).count(), interval.count());
    }
  };
  if (systemd.active()) {
    hooks.on_sample = [&systemd](const Snapshot& snapshot) { systemd.sampled(snapshot); };
    hooks.on_reloading = [&systemd] { systemd.reloading(); };
    hooks.on_reloaded = [&systemd] { systemd.reloaded(); };
    hooks.on_stopping = [&systemd] { systemd.stopping(); };
  }
  return serve(options, std::move(config), next_signal, hooks);
}

}  // namespace memdiag
