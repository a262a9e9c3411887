// SPDX-License-Identifier: Apache-2.0
// The web config file (--web.config.file, web.config_file): TLS, basic auth and response
// headers in the Prometheus exporter-toolkit's format, so the file an operator already has for
// node_exporter works here. This is the file after parsing and validation, with the paths it
// names resolved against its own directory (as the toolkit does). Certificates and keys are
// read and checked when the file is loaded (web_security.hpp), not here.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/config.hpp"
#include "probes/core/expected.hpp"

namespace memdiag {

// tls_server_config.client_auth_type: Go's crypto/tls names, as the toolkit takes them.
enum class ClientAuth {
  kNoClientCert,                // no certificate asked for
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified (client_allowed_sans may still check it)
  kVerifyClientCertIfGiven,     // not required; verified against client_ca_file when sent
  kRequireAndVerifyClientCert,  // required and verified against client_ca_file
};

enum class TlsVersion { kTls10, kTls11, kTls12, kTls13 };

struct TlsServerSettings {
  std::string cert_file;  // absolute, or relative to the working directory when the web
  std::string key_file;   // config itself was named that way
  std::string client_ca_file;  // empty: none
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;
  TlsVersion max_version = TlsVersion::kTls13;
  // As written (Go's IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); empty: OpenSSL's
  // defaults. Mapped to OpenSSL's names when the TLS context is built.
  std::vector<std::string> cipher_suites;
  // OpenSSL's group names, in order ("P-256", "X25519"), mapped from Go's (CurveP256, X25519).
  std::vector<std::string> curve_preferences;
  bool prefer_server_cipher_suites = true;
  std::vector<std::string> client_allowed_sans;  // empty: any client certificate that passes
};

struct WebConfig {
  std::string file;  // as named on the command line or in the config (for messages)
  // tls_server_config with at least one key: HTTPS only. Absent: plain HTTP (auth and headers
  // still apply), as with the toolkit.
  bool tls_enabled = false;
  TlsServerSettings tls;
  // http_server_config.headers, in the file's order: name as the toolkit spells it, value.
  std::vector<std::pair<std::string, std::string>> headers;
  bool http2 = true;  // accepted and ignored: memdiagd speaks HTTP/1.1 only
  // basic_auth_users: user -> bcrypt hash. Empty: no authentication.
  std::map<std::string, std::string, std::less<>> users;
  // Line of each key that was given ("tls_server_config.cert_file" -> 4), so that what is wrong
  // with a certificate found only when it is loaded still names the line.
  std::map<std::string, int, std::less<>> lines;

  int line_of(std::string_view key) const {
    auto it = lines.find(key);
    return it == lines.end() ? 0 : it->second;
  }
  // The files the config names (certificate, key, client CA): a change to any of them is a
  // change of the config (web_config_watcher.hpp).
  std::vector<std::string> named_files() const;
};

using WebConfigResult = Expected<WebConfig, ConfigError>;

// Parses and validates the text of a web config file `file` (its directory resolves relative
// paths). Errors name the file, line and key, like the main config's.
WebConfigResult parse_web_config(std::string_view yaml_text, const std::string& file);

// Reads and parses a file (at most 1 MiB).
WebConfigResult load_web_config_file(const std::string& path);

// The header names http_server_config.headers may set, as the toolkit allows them.
const std::vector<std::string_view>& configurable_header_names();

// Whether `hash` has the form of a bcrypt hash: $2a$, $2b$ or $2y$, a cost from 04 to 31, and 53
// characters of bcrypt's base64 (22 of salt, 31 of hash).
bool is_bcrypt_hash(std::string_view hash);

}  // namespace memdiag
