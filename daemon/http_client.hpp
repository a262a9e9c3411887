// SPDX-License-Identifier: Apache-2.0
// A minimal HTTP/1.1 GET for `memdiagd diagnose` asking a running daemon: plain http:// URLs
// only, one request per connection, every step bounded by one deadline (a daemon that accepts
// and never answers must not hang the person on call).
#pragma once

#include <chrono>
#include <string>

#include "probes/core/expected.hpp"

namespace memdiag {

struct HttpReply {
  int status = 0;
  std::string body;
};

// GET `url` ("http://HOST:PORT/PATH?QUERY"; HOST may be a name, an IPv4 or a [v6] address).
// Errors: a malformed URL, no connection, the deadline passed, a malformed reply.
Expected<HttpReply> http_get(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace memdiag
