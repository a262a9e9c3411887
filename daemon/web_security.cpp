// SPDX-License-Identifier: Apache-2.0
#include "daemon/web_security.hpp"

#include "daemon/http/tls_context.hpp"

namespace memdiag {

bool web_security_supported() { return true; }

WebSecurityResult load_web_security(const std::string& path) {
  auto config = load_web_config_file(path);
  if (!config) return config.error();
  auto security = std::make_shared<WebSecurity>();
  security->config = std::move(config).value();
  const WebConfig& c = security->config;
  if (c.tls_enabled) {
    auto tls = http::TlsContext::create(c.tls);
    if (!tls) {
      const std::string key = "tls_server_config" + (tls.error().key.empty() ? "" : "." + tls.error().key);
      int line = c.line_of(key);
      if (line == 0) line = c.line_of("tls_server_config");
      return ConfigError{path, line, key, tls.error().reason};
    }
    security->tls = std::move(tls).value();
  }
  return std::shared_ptr<const WebSecurity>(std::move(security));
}

}  // namespace memdiag
