// SPDX-License-Identifier: Apache-2.0
#include "daemon/local_http_server.hpp"

#include <spdlog/spdlog.h>

#include <set>
#include <string>

#include "daemon/http/server.hpp"
#include "daemon/http/unix_listener.hpp"

namespace memdiag {

struct LocalHttpServer::State {
  // Declared first, so destroyed last: the file is removed after the loop has stopped.
  http::UnixSocketListener listener;
  std::unique_ptr<http::Server> server;
};

namespace {

constexpr std::size_t kMaxLocalConnections = 16;

// The peer check, on the loop's thread. A refusal is logged once per uid: a client retrying
// in a loop must not flood the journal.
http::AdmitConnection root_or_self(const std::string& path) {
  return [path, said = std::make_shared<std::set<std::string>>()](http::NativeSocket connection) {
    std::string peer;
    if (http::unix_peer_allowed(connection, peer)) return true;
    const std::string uid = peer.substr(0, peer.find(','));
    if (said->insert(uid).second) {
      spdlog::warn("unix:{}: refused a connection from {}: only root and the daemon's own user are served", path,
                   peer);
    }
    return false;
  };
}

}  // namespace

Expected<std::unique_ptr<LocalHttpServer>> LocalHttpServer::start(const std::string& path, http::Handlers handlers) {
  auto listener = http::UnixSocketListener::listen(path);
  if (!listener) return listener.error();
  auto state = std::make_unique<State>(State{std::move(listener).value(), nullptr});
  // A few root sessions at a time, never the scrapers' load: a small cap keeps its descriptors
  // out of the network listener's budget.
  http::ServerLimits limits;
  limits.max_connections = kMaxLocalConnections;
  auto server = http::Server::start(state->listener.take_socket(), std::move(handlers), limits, nullptr,
                                    root_or_self(path));
  if (!server) return server.error();  // state's listener removes the file
  state->server = std::move(server).value();
  std::unique_ptr<LocalHttpServer> local(new LocalHttpServer());
  local->path_ = path;
  local->state_ = std::move(state);
  return local;
}

LocalHttpServer::~LocalHttpServer() = default;

}  // namespace memdiag
