// SPDX-License-Identifier: Apache-2.0
// The web config in force, loaded: the parsed file (web_config.hpp) and its TLS context with
// the certificates and keys read and checked. Loading
// is where a web config is refused (at start, by --check-config, on SIGHUP, and when the file
// changes: web_config_watcher.hpp), so each refusal names the file, line, key and reason.
//
// The Windows build has no OpenSSL: there load_web_security refuses every file, and memdiagd.exe
// with --web.config.file or web.config_file exits 2 saying so (docs/windows.md).
#pragma once

#include <memory>
#include <string>

#include "daemon/config.hpp"
#include "daemon/web_config.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

namespace http {
class TlsContext;
}

struct WebSecurity {
  WebConfig config;
  std::shared_ptr<const http::TlsContext> tls;  // null: plain HTTP
};

using WebSecurityResult = Expected<std::shared_ptr<const WebSecurity>, ConfigError>;

WebSecurityResult load_web_security(const std::string& path);

// Whether this build can serve a web config (false on Windows).
bool web_security_supported();

}  // namespace memdiag
