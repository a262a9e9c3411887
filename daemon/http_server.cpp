// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_server.hpp"

#include <spdlog/spdlog.h>

#include "daemon/http/listener.hpp"
#include "daemon/http/native_socket.hpp"
#include "daemon/http/server.hpp"
#include "daemon/web_access_gate.hpp"

namespace memdiag {
namespace {

http::ServerLimits limits_for_this_process() {
  http::ServerLimits limits;
  if (const auto sockets = http::socket_limit()) {
    const std::size_t cap = http::connection_cap(limits.max_connections, *sockets);
    if (cap < limits.max_connections) {
      spdlog::info("HTTP connections capped at {} (a quarter of RLIMIT_NOFILE {})", cap,
                   static_cast<unsigned long long>(*sockets));
    }
    limits.max_connections = cap;
  }
  return limits;
}

}  // namespace

Expected<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& listen_address, Handlers handlers,
                                                        std::shared_ptr<WebConfigWatcher> web) {
  auto listener = http::listen_on(listen_address);
  if (!listener) return listener.error();
  auto server = http::Server::start(std::move(listener).value(), std::move(handlers), limits_for_this_process(),
                                    web ? make_access_gate(std::move(web)) : nullptr);
  if (!server) return server.error();
  std::unique_ptr<HttpServer> http(new HttpServer());
  http->listen_address_ = listen_address;
  http->server_ = std::move(server).value();
  return http;
}

HttpServer::~HttpServer() = default;

}  // namespace memdiag
