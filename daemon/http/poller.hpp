// SPDX-License-Identifier: Apache-2.0
// Readiness of many sockets at once, for the HTTP event loop (server.cpp): epoll on Linux
// (epoll_poller.cpp), WSAPoll on Windows (wsapoll_poller.cpp). It also owns the loop's wake-up:
// wake() from any thread makes the current or next wait return with `woken` set, which is how
// the server's destructor stops the loop and how password verdicts (access_gate.hpp) reach it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "daemon/http/native_socket.hpp"
#include "probes/core/expected.hpp"

namespace memdiag::http {

// What a watched socket waits for. kNothing keeps it registered but silent (a paused listener).
enum class Interest : std::uint8_t { kNothing, kReadable, kWritable };

struct Readiness {
  NativeSocket socket = kNoSocket;
  bool readable = false;
  bool writable = false;
  bool broken = false;  // hung up or failed: reading or writing will say how
};

struct PollResult {
  std::size_t count = 0;  // entries of `ready` filled
  bool woken = false;     // wake() was called
  bool failed = false;    // the wait itself failed (`error` says why); the loop cannot go on
  std::string error;
};

class Poller {
 public:
  static Expected<std::unique_ptr<Poller>> create();
  ~Poller();

  // False when the socket cannot be watched (it is closed).
  bool watch(NativeSocket socket, Interest interest);
  void change(NativeSocket socket, Interest interest);
  void forget(NativeSocket socket);

  // Waits until a watched socket is ready, wake() is called, or `timeout_ms` passes (-1: no
  // timeout), and reports up to ready.size() sockets.
  PollResult wait(std::span<Readiness> ready, int timeout_ms);

  // Thread-safe. False when the wake-up could not be sent (the loop would not stop).
  bool wake();

  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

 private:
  struct State;
  explicit Poller(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace memdiag::http
