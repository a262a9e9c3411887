// The HTTP face of the daemon: /metrics, /healthz and an index at /. Built on civetweb (the
// server prometheus-cpp itself uses) so that we own the handlers and can add endpoints.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "probes/core/expected.hpp"

class CivetServer;

namespace memdiag {

class HttpServer {
 public:
  struct Handlers {
    std::function<void(std::string&)> render_metrics;  // appends the text exposition
    std::function<bool()> healthy;  // sampler alive?
  };

  // Binds and starts serving; a taken port or bad address is an error value with the reason.
  static Expected<std::unique_ptr<HttpServer>> start(const std::string& listen_address, Handlers handlers);

  ~HttpServer();
  const std::string& listen_address() const { return listen_address_; }

 private:
  HttpServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string listen_address_;
};

}  // namespace memdiag
