// SPDX-License-Identifier: Apache-2.0
// Cleanup at exit and on fatal signals, for benchmarks that create system state (cgroups,
// scratch files, child processes, sysctls) which must not outlive the run, however it ends.
//
// The program passes one release function: it must be async-signal-safe (plain syscalls on
// data prepared beforehand: fixed char arrays, sig_atomic_t flags) and idempotent, because it may
// run from a signal handler, from atexit(), and more than once. The normal end calls it itself,
// checks what is left, then calls exit_cleanup_done() so atexit() does not run it again.
//
// On SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL the handler
// releases, then re-raises the signal: SA_RESETHAND has restored the default action, so the
// process still dies of that signal (exit status, core dump) as it would have. SIGKILL cannot be
// caught: what a killed run leaves is each program's "remove leftovers at the next start".
#pragma once

#include <signal.h>

#include <cstdlib>

namespace memdiag::test_support {

// SIGPIPE: ignored (writes to a dead child's pipe fail with EPIPE instead) or treated like the
// other fatal signals.
enum class OnSigpipe { kIgnore, kReleaseAndDie };

namespace exit_cleanup_detail {
inline void (*g_release)() = nullptr;
inline volatile sig_atomic_t g_done = 0;

inline void on_fatal_signal(int sig) {
  g_release();  // even if the normal cleanup was under way when the signal came
  ::raise(sig);  // SA_RESETHAND: the default action once the handler returns
}

inline void at_exit() {
  if (!g_done) g_release();
}
}  // namespace exit_cleanup_detail

// Call once, before creating anything `release` removes.
inline void install_exit_cleanup(void (*release)(), OnSigpipe sigpipe = OnSigpipe::kIgnore) {
  exit_cleanup_detail::g_release = release;
  std::atexit(exit_cleanup_detail::at_exit);
  struct sigaction sa{};
  sa.sa_handler = exit_cleanup_detail::on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::sigaction(sig, &sa, nullptr);
  if (sigpipe == OnSigpipe::kIgnore) {
    ::signal(SIGPIPE, SIG_IGN);
  } else {
    ::sigaction(SIGPIPE, &sa, nullptr);
  }
}

// The normal end has released (and checked) everything: atexit() has nothing left to do.
inline void exit_cleanup_done() { exit_cleanup_detail::g_done = 1; }

}  // namespace memdiag::test_support
