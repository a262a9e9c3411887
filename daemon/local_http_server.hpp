// SPDX-License-Identifier: Apache-2.0
// web.unix_socket: the daemon's endpoints on a Unix domain socket for root on the node
// (daemon/http/unix_listener.hpp), in an event loop of its own beside the network listener's.
// Its own loop, not a second listener in that one: the network listener is rebuilt when a reload
// moves it, and the socket must neither move with it nor meet the web config's gate (TLS, basic
// auth and headers are for the network; here the file's mode and the peer's uid decide).
// Linux; the Windows build refuses it (local_http_server_unsupported.cpp).
#pragma once

#include <memory>
#include <string>

#include "daemon/http/endpoints.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

class LocalHttpServer {
 public:
  // Makes the socket at `path` (removing a stale one) and serves on it; an error value says why
  // it cannot (no such directory, another daemon serving there, not a socket).
  static Expected<std::unique_ptr<LocalHttpServer>> start(const std::string& path, http::Handlers handlers);
  // Stops serving, then removes the socket file.
  ~LocalHttpServer();

  const std::string& path() const { return path_; }

  struct State;

 private:
  LocalHttpServer() = default;
  std::string path_;
  std::unique_ptr<State> state_;
};

}  // namespace memdiag
