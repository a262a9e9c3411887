// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_child_main.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <exception>
#include <optional>
#include <thread>

#include "probes/canary/canary_child_report.hpp"

namespace memdiag::canary {
namespace {

template <class T>
bool parse_number(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string& child_program() {
  static std::string program;
  return program;
}

}  // namespace

std::vector<std::string> canary_child_arguments(const CanaryOptions& options, pid_t parent) {
  return {"--canary-child",
          std::to_string(options.working_set_bytes),
          std::to_string(options.interval.count()),
          std::to_string(options.ceiling_bytes),
          std::to_string(options.backoff_psi_full),
          options.psi_path,
          options.cgroup_dir,
          options.cgroup_root,
          options.cgroup_v2 ? "v2" : "v1",
          std::to_string(parent)};
}

int run_canary_child(const std::vector<std::string>& args) {
  // working_set_bytes interval_ms ceiling_bytes backoff_psi_full psi_path cgroup_dir cgroup_root
  // v1|v2 parent_pid (last: tests find the daemon's children by it)
  if (args.size() != 9) return kChildBadArguments;
  CanaryOptions options;
  long long interval_ms = 0;
  pid_t parent = 0;
  if (!parse_number(args[0], options.working_set_bytes) || !parse_number(args[1], interval_ms) ||
      !parse_number(args[2], options.ceiling_bytes) || !parse_number(args[3], options.backoff_psi_full) ||
      !parse_number(args[8], parent)) {
    return kChildBadArguments;
  }
  options.interval = std::chrono::milliseconds(interval_ms);
  options.psi_path = args[4];
  options.cgroup_dir = args[5];
  options.cgroup_root = args[6];
  options.cgroup_v2 = args[7] == "v2";
  // The name the canary's thread had when it ran inside the daemon: its CPU shows apart in top.
  ::prctl(PR_SET_NAME, "memdiag-canary");
  ::signal(SIGPIPE, SIG_IGN);  // a gone parent shows as EPIPE: then stop
  // A parent slow to read (its sampler in a long kernel read) must not stall the measuring: a
  // report that finds the pipe full is dropped, which loses nothing, as reports are cumulative.
  ::fcntl(STDOUT_FILENO, F_SETFL, ::fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
  std::optional<CanaryRunner> runner;
  try {
    runner.emplace(options);
  } catch (const std::exception&) {
    return kChildCannotStart;  // its locked page or its allocator's reservation was refused
  }
  for (;;) {
    runner->tick();
    CanaryChildReport report;
    report.reading = runner->reading();
    report.allocator = runner->allocator_stats();
    report.bookkeeping_locked = runner->bookkeeping_locked();
    if (::write(STDOUT_FILENO, &report, sizeof report) < 0 && errno != EAGAIN && errno != EINTR) return 0;
    std::this_thread::sleep_for(options.interval);
    // Orphaned (PR_SET_PDEATHSIG covers most ways; this the rest). Not "parent is 1": the
    // daemon itself is pid 1 in a container.
    if (::getppid() != parent) return 0;
  }
}

void set_canary_child_program(std::string path) { child_program() = std::move(path); }

const std::string& canary_child_program() { return child_program(); }

}  // namespace memdiag::canary
