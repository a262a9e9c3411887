// SPDX-License-Identifier: Apache-2.0
// Loading BPF objects in a short-lived child process. libbpf 1.1 parses the kernel's BTF
// (/sys/kernel/btf/vmlinux, 5.3 MiB here) for every object it loads: it reads the file into one
// buffer, copies it into another and indexes the types, ~11 MiB for a moment, and cannot be
// handed a BTF parsed once. In the daemon that moment set its peak RSS at twice its steady RSS,
// and glibc keeps some of it. A forked child pays it instead: it opens, loads and attaches the
// programs, sends the descriptors the daemon needs (maps, programs, links) back over a
// socketpair with SCM_RIGHTS, and exits without closing anything, so the programs stay
// attached through the daemon's copies of the descriptors and go when the daemon closes them.
//
// How the child is made: the daemon runs itself (`memdiagd --bpf-loader FD NAME ARGS...`, see
// set_bpf_loader_program), so the child is a fresh process: a fork of the multi-threaded daemon
// that went on running code could find a lock (an allocator's) held by a thread that does not
// exist in the child, and under clang 14's AddressSanitizer it did, and the child hung. A
// program without that mode (the test binaries) forks and runs the load function in the child,
// which is safe while no other thread allocates. Either way the load function gets its options
// as strings, the same ones, and the child never logs: libbpf's lines come back in the message.
// The parent waits with a deadline and reaps the child.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/core/expected.hpp"
#include "probes/linux/unique_fd.hpp"

namespace memdiag {

// What the load function returns in the child: descriptors by name (not owned: the child exits
// holding them), the probe's own report, and libbpf's lines; or, with `error` set, why the load
// failed (with libbpf's lines up to then, and no descriptors).
struct BpfHandoff {
  std::string error;
  std::vector<std::pair<std::string, int>> descriptors;
  std::string report;
  std::vector<std::string> log;
};

// What the parent receives: its own copies of the descriptors, and what the child cost.
struct ReceivedBpf {
  std::vector<std::pair<std::string, UniqueFd>> descriptors;
  std::string report;
  std::vector<std::string> log;
  long child_peak_rss_kib = 0;  // the child's VmHWM (getrusage of the reaped child)
  std::chrono::microseconds took{0};

  // The descriptor sent under `name`, moved out; an invalid one when there is none.
  UniqueFd take(std::string_view name);
};

struct BpfLoaderFailure {
  std::string message;
  std::vector<std::string> log;  // libbpf's lines up to the failure
  long child_peak_rss_kib = 0;
};

// A probe's load function, run in the child with the arguments it was given.
using BpfLoadFunction = BpfHandoff (*)(const std::vector<std::string>& args);

// Runs the load named `name` (`function`, with `args`) in a child and returns what it sent: a
// load that fails comes back with its message; a child that crashes, hangs past `deadline`
// (killed then) or sends garbage is an error naming that.
Expected<ReceivedBpf, BpfLoaderFailure> load_in_child(std::string_view name, BpfLoadFunction function,
                                                      const std::vector<std::string>& args,
                                                      std::chrono::milliseconds deadline = std::chrono::seconds(60));

// The same for a function that is not a named loader: always forked (tests of the transport).
Expected<ReceivedBpf, BpfLoaderFailure> load_in_forked_child(const std::function<BpfHandoff()>& load,
                                                             std::chrono::milliseconds deadline = std::chrono::seconds(60));

}  // namespace memdiag
