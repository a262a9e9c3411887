// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/bpf_loader_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "probes/bpf/bpf_factories.hpp"
#include "probes/bpf/bpf_handoff_message.hpp"
#include "probes/bpf/reclaim_stall_probe.hpp"
#include "probes/bpf/task_maps_iterator.hpp"

namespace memdiag {

namespace {

// Where the exec'd loader finds its end of the socket.
constexpr int kLoaderSocketFd = 3;

// Sends what a load returned, with its descriptors, as one message on `socket`.
void send_handoff(int socket, BpfHandoff loaded) {
  BpfHandoffMessage message;
  std::vector<int> fds;
  message.error = std::move(loaded.error);
  message.log = std::move(loaded.log);
  if (message.error.empty()) {
    for (const auto& [name, fd] : loaded.descriptors) {
      message.names.push_back(name);
      fds.push_back(fd);
    }
    message.report = std::move(loaded.report);
  }
  if (fds.size() > kHandoffMaxDescriptors) {
    message = BpfHandoffMessage{};
    message.error = "the BPF loader has " + std::to_string(fds.size()) + " descriptors to send (at most " +
                    std::to_string(kHandoffMaxDescriptors) + ")";
    fds.clear();
  }
  std::string bytes = encode_handoff(message);
  // An answer too big for one message was turned into an error: then no descriptors go.
  if (auto sent = decode_handoff(bytes, fds.size()); !sent || !sent->error.empty()) fds.clear();

  struct iovec iov {};
  iov.iov_base = bytes.data();
  iov.iov_len = bytes.size();
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (fds.empty() ? 1 : fds.size())), 0);
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  }
  while (::sendmsg(socket, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

// Runs a load, turning an exception into an error the parent hears.
BpfHandoff run_load(const std::function<BpfHandoff()>& load) {
  try {
    return load();
  } catch (const std::exception& e) {
    BpfHandoff out;
    out.error = std::string("the BPF loader failed: ") + e.what();
    return out;
  } catch (...) {
    BpfHandoff out;
    out.error = "the BPF loader failed with an unknown exception";
    return out;
  }
}

// The program with the --bpf-loader mode, if this process has named one.
std::string& loader_program() {
  static std::string program;
  return program;
}

BpfLoaderFailure failure(std::string message, long peak_kib = 0, std::vector<std::string> log = {}) {
  BpfLoaderFailure out;
  out.message = std::move(message);
  out.log = std::move(log);
  out.child_peak_rss_kib = peak_kib;
  return out;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended with status " + std::to_string(status);
}

}  // namespace

UniqueFd ReceivedBpf::take(std::string_view name) {
  for (auto& [n, fd] : descriptors) {
    if (n == name && fd) return std::move(fd);
  }
  return UniqueFd{};
}

namespace {

// Starts the child: `start_child` runs in it after fork, with the socket's child end, and must
// not return. Then waits for the answer and reaps the child.
template <class StartChild>
Expected<ReceivedBpf, BpfLoaderFailure> run_child(StartChild start_child, std::chrono::milliseconds deadline) {
  const auto started = std::chrono::steady_clock::now();
  int ends[2];
  // SEQPACKET: the child's answer is one message, arriving whole or not at all.
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
    return failure("cannot create the BPF loader's socket: " + std::string(std::strerror(errno)));
  }
  UniqueFd parent_end(ends[0]);
  UniqueFd child_end(ends[1]);

  const pid_t pid = ::fork();
  if (pid < 0) {
    return failure("cannot fork the BPF loader: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(ends[0]);
    // A daemon killed while its child loads must not leave the child behind (kept across exec).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    start_child(ends[1]);
    ::_exit(127);
  }
  child_end.reset();  // so a child that dies without answering reads as end-of-file

  // Reaps the child whatever happens below; its peak RSS comes with it.
  long peak_kib = 0;
  int exit_status = 0;
  auto reap = [&] {
    struct rusage usage {};
    while (::wait4(pid, &exit_status, 0, &usage) < 0 && errno == EINTR) {
    }
    peak_kib = usage.ru_maxrss;
  };

  struct pollfd pfd {parent_end.get(), POLLIN, 0};
  int ready = 0;
  for (;;) {
    const auto left = deadline - std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started);
    ready = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    break;
  }
  if (ready <= 0) {
    const int err = errno;
    ::kill(pid, SIGKILL);
    reap();
    if (ready == 0) {
      return failure("the BPF loader did not answer within " + std::to_string(deadline.count()) + " ms (killed)",
                     peak_kib);
    }
    return failure("waiting for the BPF loader failed: " + std::string(std::strerror(err)), peak_kib);
  }

  std::string bytes(kHandoffMaxBytes + 1, '\0');
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kHandoffMaxDescriptors) + CMSG_SPACE(sizeof(int)), 0);
  struct iovec iov {};
  iov.iov_base = bytes.data();
  iov.iov_len = bytes.size();
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n = -1;
  while ((n = ::recvmsg(parent_end.get(), &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  const int recv_errno = errno;
  // Every descriptor that arrived is owned at once, so each path out closes it.
  std::vector<UniqueFd> fds;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.emplace_back(fd);
    }
  }
  reap();
  if (n < 0) {
    return failure("reading the BPF loader's answer failed: " + std::string(std::strerror(recv_errno)), peak_kib);
  }
  if (n == 0) {
    return failure("the BPF loader " + describe_exit(exit_status) + " before answering", peak_kib);
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    return failure("the BPF loader's answer was cut short", peak_kib);
  }
  bytes.resize(static_cast<std::size_t>(n));
  auto message = decode_handoff(bytes, fds.size());
  if (!message) return failure("the BPF loader's answer is malformed: " + message.error().message, peak_kib);
  if (!message->error.empty()) return failure(message->error, peak_kib, std::move(message->log));

  ReceivedBpf out;
  for (std::size_t i = 0; i < fds.size(); ++i) out.descriptors.emplace_back(message->names[i], std::move(fds[i]));
  out.report = std::move(message->report);
  out.log = std::move(message->log);
  out.child_peak_rss_kib = peak_kib;
  out.took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  return out;
}

}  // namespace

Expected<ReceivedBpf, BpfLoaderFailure> load_in_forked_child(const std::function<BpfHandoff()>& load,
                                                             std::chrono::milliseconds deadline) {
  return run_child(
      [&load](int socket) {
        send_handoff(socket, run_load(load));
        // _exit: no destructors, no atexit handlers, no detaching. The parent holds the programs now.
        ::_exit(0);
      },
      deadline);
}

Expected<ReceivedBpf, BpfLoaderFailure> load_in_child(std::string_view name, BpfLoadFunction function,
                                                      const std::vector<std::string>& args,
                                                      std::chrono::milliseconds deadline) {
  const std::string& program = loader_program();
  if (program.empty()) return load_in_forked_child([&] { return function(args); }, deadline);
  // argv is built before the fork: between fork and exec the child only makes system calls.
  std::vector<std::string> argv_text = {program, "--bpf-loader", std::to_string(kLoaderSocketFd), std::string(name)};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  return run_child(
      [&argv](int socket) {
        // dup2 clears close-on-exec on the copy: the loader finds its socket at a known number
        // (already there: clear the flag itself).
        if (socket == kLoaderSocketFd) {
          if (::fcntl(socket, F_SETFD, 0) < 0) ::_exit(126);
        } else if (::dup2(socket, kLoaderSocketFd) < 0) {
          ::_exit(126);
        }
        ::execv(argv[0], argv.data());
        ::_exit(127);  // the parent reads end-of-file: "exited with code 127 before answering"
      },
      deadline);
}

void set_bpf_loader_program(std::string path) { loader_program() = std::move(path); }

int run_bpf_loader(const std::vector<std::string>& args) {
  // FD NAME ARGS...: the socket, which loader, its arguments.
  if (args.size() < 2 || args[0] != std::to_string(kLoaderSocketFd)) return 2;
  const std::vector<std::string> rest(args.begin() + 2, args.end());
  BpfHandoff loaded;
  if (args[1] == kReclaimStallLoader) {
    loaded = run_load([&] { return load_reclaim_stall_for_parent(rest); });
  } else if (args[1] == kTaskMapsLoader) {
    loaded = run_load([&] { return load_task_maps_for_parent(rest); });
  } else {
    loaded.error = "no BPF loader named " + args[1];
  }
  send_handoff(kLoaderSocketFd, std::move(loaded));
  ::_exit(0);  // as in the forked child: nothing detached
}

}  // namespace memdiag
