// The HTTP face of the daemon: /metrics, /healthz and an index at / (daemon/http/endpoints.hpp),
// served by the daemon's own event-loop server (daemon/http/server.hpp) on one listen address.
#pragma once

#include <memory>
#include <string>

#include "daemon/http/endpoints.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

namespace http {
class Server;
}

class HttpServer {
 public:
  using Handlers = http::Handlers;

  // Binds and starts serving; a taken port or bad address is an error value with the reason.
  static Expected<std::unique_ptr<HttpServer>> start(const std::string& listen_address, Handlers handlers);

  ~HttpServer();
  const std::string& listen_address() const { return listen_address_; }

 private:
  HttpServer() = default;
  std::unique_ptr<http::Server> server_;
  std::string listen_address_;
};

}  // namespace memdiag
