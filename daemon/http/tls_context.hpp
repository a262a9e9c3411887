// SPDX-License-Identifier: Apache-2.0
// One OpenSSL server context built from tls_server_config (daemon/web_config.hpp): the
// certificate chain and key, the client certificate policy, the protocol versions, cipher
// suites and curves. Built (and so checked) when the web config is loaded; every connection
// accepted while that config is in force gets its TLS session from it (tls_stream.hpp), and
// holds it for as long as it lives, so a reload never pulls it from under a handshake.
// Linux only: the Windows build has no OpenSSL (docs/windows.md).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "daemon/web_config.hpp"
#include "probes/core/expected.hpp"

namespace memdiag::http {

// What is wrong, under which key of tls_server_config ("cert_file", "cipher_suites", ...).
struct TlsRefusal {
  std::string key;
  std::string reason;
};

class TlsContext {
 public:
  static Expected<std::shared_ptr<const TlsContext>, TlsRefusal> create(const TlsServerSettings& settings);
  ~TlsContext();

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* native() const { return context_; }

  // Whether the client certificate `certificate` carries one of client_allowed_sans (DNS name,
  // e-mail address, IP address or URI, compared exactly, as the toolkit does); true when the
  // list is empty.
  bool allowed(X509* certificate) const;

 private:
  TlsContext() = default;
  SSL_CTX* context_ = nullptr;
  ClientAuth client_auth_ = ClientAuth::kNoClientCert;
  std::vector<std::string> allowed_sans_;

  friend int verify_client(int preverified, X509_STORE_CTX* store);
};

}  // namespace memdiag::http
