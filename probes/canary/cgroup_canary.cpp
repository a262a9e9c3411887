#include "probes/canary/cgroup_canary.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>
#include <type_traits>

namespace memdiag::canary {
namespace {

// The reading crosses the pipe as raw bytes between two copies of the same binary; it fits in
// one atomic pipe write, so the reader never sees half of one.
static_assert(std::is_trivially_copyable_v<CanaryReading>);
static_assert(sizeof(CanaryReading) <= PIPE_BUF);

template <class T>
bool parse_number(const std::string& text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// The child's exit status when it cannot move itself into the cgroup.
constexpr int kCannotJoin = 3;

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

}  // namespace

int run_canary_child(const std::vector<std::string>& args) {
  // working_set_bytes interval_ms ceiling_bytes backoff_psi_full psi_path parent_pid
  if (args.size() != 6) return 2;
  CanaryOptions options;
  long long interval_ms = 0;
  if (!parse_number(args[0], options.working_set_bytes) || !parse_number(args[1], interval_ms) ||
      !parse_number(args[2], options.ceiling_bytes) || !parse_number(args[3], options.backoff_psi_full)) {
    return 2;
  }
  options.interval = std::chrono::milliseconds(interval_ms);
  options.psi_path = args[4];
  pid_t parent = 0;
  if (!parse_number(args[5], parent)) return 2;
  ::signal(SIGPIPE, SIG_IGN);  // a gone parent shows as EPIPE: then stop
  CanaryRunner runner(options);
  for (;;) {
    runner.tick();
    const CanaryReading reading = runner.reading();
    if (::write(STDOUT_FILENO, &reading, sizeof reading) != static_cast<ssize_t>(sizeof reading)) return 0;
    std::this_thread::sleep_for(options.interval);
    // Orphaned (PR_SET_PDEATHSIG covers most ways; this the rest). Not "parent is 1": the
    // daemon itself is pid 1 in a container.
    if (::getppid() != parent) return 0;
  }
}

CgroupCanary::CgroupCanary(std::string cgroup, std::vector<std::string> cgroup_dirs, CanaryOptions options,
                           std::string self_exe, std::chrono::milliseconds restart_after)
    : cgroup_(std::move(cgroup)),
      cgroup_dirs_(std::move(cgroup_dirs)),
      options_(std::move(options)),
      self_exe_(std::move(self_exe)),
      restart_after_(restart_after) {}

CgroupCanary::~CgroupCanary() { stop(); }

void CgroupCanary::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (from_child_ >= 0) ::close(from_child_);
  from_child_ = -1;
}

void CgroupCanary::start() {
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls (the daemon has threads).
  std::vector<std::string> procs_files;
  for (const auto& dir : cgroup_dirs_) procs_files.push_back(dir + "/cgroup.procs");
  const std::vector<std::string> args = {self_exe_,
                                         "--canary-child",
                                         std::to_string(options_.working_set_bytes),
                                         std::to_string(options_.interval.count()),
                                         std::to_string(options_.ceiling_bytes),
                                         std::to_string(options_.backoff_psi_full),
                                         options_.psi_path,
                                         std::to_string(::getpid())};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<int> procs_fds;
  for (const auto& file : procs_files) {
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
      if (!write_all(fd, "0", 1)) ::_exit(kCannotJoin);
    }
    ::dup2(pipe_fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::execv(argv[0], argv.data());
    ::_exit(4);
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

void CgroupCanary::drain() {
  if (from_child_ < 0) return;
  // Keep the newest complete reading; readings are cumulative, so skipping old ones loses nothing.
  CanaryReading incoming;
  while (::read(from_child_, &incoming, sizeof incoming) == static_cast<ssize_t>(sizeof incoming)) latest_ = incoming;
}

CgroupCanaryReading CgroupCanary::poll() {
  const auto now = std::chrono::steady_clock::now();
  drain();  // before a reaped child's pipe is closed: its last readings count
  if (pid_ > 0) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (WIFEXITED(status) && WEXITSTATUS(status) == kCannotJoin) {
        error_ = "the canary child could not join " + cgroup_ +
                 " (on cgroup v2 a cgroup with controllers enabled below it takes no processes: name a leaf)";
      } else {
        error_ = WIFEXITED(status) ? "canary child exited with status " + std::to_string(WEXITSTATUS(status))
                                   : "canary child killed by signal " + std::to_string(WTERMSIG(status));
      }
      stop();
    }
  }
  if (pid_ <= 0 && (!ever_started_ || now - started_at_ >= restart_after_)) {
    ever_started_ = true;
    started_at_ = now;
    // A new child counts from zero: what the last one counted is carried over.
    before_latest_.add_counts(latest_);
    latest_ = CanaryReading{};
    start();
  }
  drain();
  CgroupCanaryReading out;
  out.cgroup = cgroup_;
  out.running = pid_ > 0;
  out.error = error_;
  out.reading = latest_;  // backing_off and the PSI reading: the current child's
  out.reading.add_counts(before_latest_);
  return out;
}

}  // namespace memdiag::canary
