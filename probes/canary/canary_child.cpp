// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_child.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "probes/canary/canary_child_main.hpp"

namespace memdiag::canary {
namespace {

// One report per pipe write, read whole: the kernel never splits a write of at most PIPE_BUF.
static_assert(sizeof(CanaryChildReport) <= PIPE_BUF);

// Writes all of `text` to an already open descriptor; async-signal-safe (used between fork and
// exec).
bool write_all(int fd, const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, text, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string joined(const std::vector<std::string>& dirs) {
  std::string out;
  for (const auto& d : dirs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

}  // namespace

CanaryChild::CanaryChild(CanaryOptions options, std::string program, std::vector<std::string> join_cgroup_dirs,
                         std::chrono::milliseconds restart_after)
    : options_(std::move(options)),
      program_(std::move(program)),
      join_cgroup_dirs_(std::move(join_cgroup_dirs)),
      restart_after_(restart_after) {}

CanaryChild::~CanaryChild() { stop(); }

void CanaryChild::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (from_child_ >= 0) ::close(from_child_);
  from_child_ = -1;
}

void CanaryChild::start() {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls (the daemon has threads).
  std::vector<std::string> args = canary_child_arguments(options_, ::getpid());
  args.insert(args.begin(), program_);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<int> procs_fds;
  for (const auto& dir : join_cgroup_dirs_) {
    const std::string file = dir + "/cgroup.procs";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      error_ = "cannot join " + file + ": " + std::strerror(errno);
      for (int f : procs_fds) ::close(f);
      return;
    }
    procs_fds.push_back(fd);
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    error_ = std::string("pipe: ") + std::strerror(errno);
    for (int f : procs_fds) ::close(f);
    return;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(0);
    // "0" moves the writing task itself into the cgroup: no pid formatting needed here.
    for (int fd : procs_fds) {
      if (!write_all(fd, "0", 1)) ::_exit(kChildCannotJoin);
    }
    ::dup2(pipe_fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::execv(argv[0], argv.data());
    ::_exit(kChildCannotExec);
  }
  for (int f : procs_fds) ::close(f);
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    error_ = std::string("fork: ") + std::strerror(errno);
    return;
  }
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  pid_ = pid;
  from_child_ = pipe_fds[0];
  error_.clear();
}

void CanaryChild::drain() {
  if (from_child_ < 0) return;
  // Keep the newest complete report; reports are cumulative, so skipping old ones loses nothing.
  CanaryChildReport incoming;
  while (::read(from_child_, &incoming, sizeof incoming) == static_cast<ssize_t>(sizeof incoming)) {
    latest_ = incoming;
    latest_received_ = true;
  }
}

CanaryChildStatus CanaryChild::poll() {
  const auto now = std::chrono::steady_clock::now();
  drain();  // before a reaped child's pipe is closed: its last reports count
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      if (code == kChildCannotJoin) {
        error_ = "the canary child could not join " + joined(join_cgroup_dirs_) +
                 " (on cgroup v2 a cgroup with controllers enabled below it takes no processes: name a leaf)";
      } else if (code == kChildCannotExec) {
        error_ = "could not run " + program_ + " as the canary child";
      } else if (code == kChildCannotStart) {
        error_ = "the canary child was refused memory for its runner";
      } else {
        error_ = WIFEXITED(status) ? "canary child exited with status " + std::to_string(code)
                                   : "canary child killed by signal " + std::to_string(WTERMSIG(status));
      }
      stop();
    }
  }
  if (pid_ <= 0 && (!ever_started_ || now - started_at_ >= restart_after_)) {
    ever_started_ = true;
    started_at_ = now;
    // A new child counts from zero: what the last one counted is carried over.
    before_latest_.reading.add_counts(latest_.reading);
    before_latest_.allocator.add_counters(latest_.allocator);
    latest_ = CanaryChildReport{};
    latest_received_ = false;
    start();
  }
  drain();
  CanaryChildStatus out;
  out.running = pid_ > 0;
  out.pid = pid_;
  out.error = error_;
  out.reported = out.running && latest_received_;
  if (out.running) {
    out.report = latest_;  // the gauges: the running child's
  } else {  // the last child's counts stay; nothing holds memory or backs off now
    out.report.reading.add_counts(latest_.reading);
    out.report.allocator.add_counters(latest_.allocator);
  }
  out.report.reading.add_counts(before_latest_.reading);
  out.report.allocator.add_counters(before_latest_.allocator);
  return out;
}

}  // namespace memdiag::canary
