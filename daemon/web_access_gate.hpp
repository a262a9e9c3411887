// SPDX-License-Identifier: Apache-2.0
// The HTTP server's AccessGate (daemon/http/access_gate.hpp) for --web.config.file, like the
// exporter-toolkit's: TLS for new connections when the config has a tls_server_config, basic
// auth against basic_auth_users' bcrypt hashes (401 with "WWW-Authenticate: Basic" otherwise),
// and http_server_config.headers on every response, all under the config in force
// (web_config_watcher.hpp), so an edit applies without a restart.
//
// Passwords are checked off the loop thread (password_verifier.hpp) and right ones cached
// (credential_cache.hpp): a scraper's credentials cost one bcrypt check, then a hash lookup
// per scrape; a flood of wrong ones waits in a bounded queue (503 beyond it) on one worker
// thread, and the loop goes on serving everyone else meanwhile.
//
// One gate per HTTP server (its verdicts wake that server's loop); the watcher is shared.
// Linux only (OpenSSL, libxcrypt): make_access_gate gives null on Windows.
#pragma once

#include <memory>

#include "daemon/http/access_gate.hpp"
#include "daemon/web_config_watcher.hpp"

namespace memdiag {

// The gate for the watcher's web config, or null where this build has none (Windows).
std::shared_ptr<http::AccessGate> make_access_gate(std::shared_ptr<WebConfigWatcher> watcher);

}  // namespace memdiag
