// The daemon on Linux: signals are its control events (SIGTERM and SIGINT stop it, SIGHUP
// reloads), taken with sigwait in the main thread rather than in async handlers.
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>

#include "daemon/daemon.hpp"

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
  return serve(options, std::move(config), next_signal);
}

}  // namespace memdiag
