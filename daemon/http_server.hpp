// SPDX-License-Identifier: Apache-2.0
// The HTTP face of the daemon: /metrics, /healthz and an index at / (daemon/http/endpoints.hpp),
// served by the daemon's own event-loop server (daemon/http/server.hpp) on one listen address,
// behind the web config's TLS, basic auth and headers when there is one (web_access_gate.hpp).
#pragma once

#include <memory>
#include <string>

#include "daemon/http/endpoints.hpp"
#include "daemon/web_config_watcher.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

namespace http {
class Server;
}

class HttpServer {
 public:
  using Handlers = http::Handlers;

  // Binds and starts serving; a taken port or bad address is an error value with the reason.
  // `web`: the web config in force (none: plain HTTP for anyone), shared with the daemon,
  // which retargets it on SIGHUP.
  static Expected<std::unique_ptr<HttpServer>> start(const std::string& listen_address, Handlers handlers,
                                                     std::shared_ptr<WebConfigWatcher> web = nullptr);

  ~HttpServer();
  const std::string& listen_address() const { return listen_address_; }

 private:
  HttpServer() = default;
  std::unique_ptr<http::Server> server_;
  std::string listen_address_;
};

}  // namespace memdiag
