// SPDX-License-Identifier: Apache-2.0
// The child's side of a canary child (canary_child.hpp): memdiagd run again as
// `memdiagd --canary-child <options> <parent pid>` runs a CanaryRunner's cycles on its main
// thread and writes a CanaryChildReport to stdout (the pipe to its parent) after each one, until
// the parent goes. Its counters and its allocator's bookkeeping are mlock()ed here, in the child,
// where the page faults happen; the parent only copies the latest report it received.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "probes/canary/canary_runner.hpp"

namespace memdiag::canary {

// The child's exit statuses its parent tells apart.
inline constexpr int kChildBadArguments = 2;
inline constexpr int kChildCannotJoin = 3;   // could not move into its cgroup (before exec)
inline constexpr int kChildCannotExec = 4;   // the program could not be run
inline constexpr int kChildCannotStart = 5;  // its runner was refused memory

// The arguments after the program's path: "--canary-child" and what run_canary_child reads.
std::vector<std::string> canary_child_arguments(const CanaryOptions& options, pid_t parent);

// argv after "--canary-child". Runs until the parent goes; the exit code.
int run_canary_child(const std::vector<std::string>& args);

// The program that has the --canary-child mode: memdiagd's main() names itself here before any
// source starts. Any other program (the unit tests, benchmarks) has no such mode and leaves it
// empty, so the canary source refuses to start there (probe() says why) instead of running a
// test binary again as its "child"; tests that run children name the memdiagd binary instead.
// Set once, before threads start.
void set_canary_child_program(std::string path);
const std::string& canary_child_program();

}  // namespace memdiag::canary
