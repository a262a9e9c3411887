// SPDX-License-Identifier: Apache-2.0
// A minimal HTTP/1.1 GET for `memdiagd diagnose` asking a running daemon: http:// or https://
// (OpenSSL), with basic auth when given, one request per connection, every step bounded by one
// deadline (a daemon that accepts and never answers must not hang the person on call).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "probes/core/expected.hpp"

namespace memdiag {

struct HttpReply {
  int status = 0;
  std::string body;
};

struct HttpClientOptions {
  // "user:password": sent as basic auth.
  std::optional<std::string> basic_auth;
  // https: trust exactly this certificate (PEM; its first certificate), such as the daemon's own
  // cert_file read from its web config on the same node. It is that certificate or nothing, so
  // no CA and no host name are checked (the daemon is asked at a loopback address).
  std::string pinned_certificate;
  // https without a pinned certificate: the CA bundle (PEM) to verify the daemon against, else
  // the system's; the host name is checked.
  std::string ca_file;
  // https: present this certificate (PEM file, its chain after it) and key when the daemon asks
  // for one (its web config's client_auth_type). Empty: none.
  std::string client_cert_file;
  std::string client_key_file;
  // Connect to this Unix domain socket instead of the URL's host and port (web.unix_socket):
  // plain HTTP, the URL giving only the path and query.
  std::string unix_socket;
};

// GET `url` ("http[s]://HOST:PORT/PATH?QUERY"; HOST may be a name, an IPv4 or a [v6] address).
// Errors: a malformed URL, no connection, a certificate not trusted, the deadline passed, a
// malformed reply.
Expected<HttpReply> http_get(const std::string& url, std::chrono::milliseconds timeout,
                             const HttpClientOptions& options = {});

// Whether a connection to the Unix socket at `path` is accepted now (exists, this user may
// connect, something listens); the error says why not ("Permission denied").
Status unix_socket_connectable(const std::string& path);

}  // namespace memdiag
