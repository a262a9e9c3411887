// SPDX-License-Identifier: Apache-2.0
// The HTTP server's event loop: one thread, a Poller (epoll; WSAPoll on Windows) over the
// listening socket and every connection, non-blocking throughout. A connection costs a socket
// and a small buffer, never a thread, so clients that connect and send nothing (or half a request) cannot starve
// the ones that ask for /metrics; each has a deadline (server_limits.hpp), and at the
// connection cap the one that has waited longest is dropped for the newcomer.
//
// Responses are made in the loop thread: /metrics renders the latest snapshot once (~50 us; a
// few ms with hundreds of cgroups) and shares that buffer with every connection asking until
// the next, and a thread hand-off would cost about as much as it saves. Sending is
// non-blocking, so a client that reads slowly delays nobody; what clients that do not read
// can hold is bounded per socket (SO_SNDBUF) and in total (max_held_bytes, server_limits.hpp).
//
// With a web config, an AccessGate (access_gate.hpp) gives each new connection its stream (TLS
// or plain) and admits each request; TLS handshakes run in this loop as the connection's first
// reads, under the same head deadline, and password checks run on the gate's own thread, their
// verdicts coming back through the poller's wake-up.
#pragma once

#include <functional>
#include <memory>
#include <thread>

#include "daemon/http/access_gate.hpp"
#include "daemon/http/endpoints.hpp"
#include "daemon/http/server_limits.hpp"
#include "daemon/http/native_socket.hpp"
#include "probes/core/expected.hpp"

namespace memdiag::http {

// Asked of each accepted connection before anything is read from it: false closes it at once
// (the Unix socket's check of its peer's uid, unix_listener.hpp).
using AdmitConnection = std::function<bool(NativeSocket)>;

class Server {
 public:
  // Serves `listener` (a listening socket, listener.hpp or unix_listener.hpp) on a thread of its
  // own until destroyed; the destructor stops the loop and closes every connection. `gate`: null
  // serves every request over plain HTTP. `admit`: empty admits every connection.
  static Expected<std::unique_ptr<Server>> start(UniqueSocket listener, Handlers handlers, ServerLimits limits,
                                                 std::shared_ptr<AccessGate> gate = nullptr,
                                                 AdmitConnection admit = {});
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

 private:
  struct Loop;
  explicit Server(std::unique_ptr<Loop> loop);
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace memdiag::http
