// SPDX-License-Identifier: Apache-2.0
// A response as it goes on the wire: a head (status line and header fields, with the whole body
// of a small response after it) and, for /metrics, a body shared with every other connection
// sending the same exposition. The two leave in one sendmsg (two small writes on a socket made
// every scrape wait ~40 ms for the peer's delayed ACK), and a 2.5 MB exposition is never copied
// per connection: 512 clients that ask and never read hold one buffer, not 512.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace memdiag::http {

struct ResponseHead {
  int status = 200;
  std::string_view content_type = "text/plain; charset=utf-8";
  bool close = false;           // "Connection: close": the server closes after sending it
  std::string_view allow = {};  // "Allow:" field of a 405
  // "Content-Security-Policy:" field (the status page's); none when empty.
  std::string_view content_security_policy = {};
  // "Content-Encoding: gzip": the body is gzipped (and "Vary: Accept-Encoding" comes with it).
  bool gzip = false;
  // "Vary: Accept-Encoding" on a body sent as it is that another request would get gzipped.
  bool vary_accept_encoding = false;
};

// "OK", "Not Found", ...; "Unknown" for a status this server never sends.
std::string_view reason_phrase(int status);

struct WireResponse {
  std::string head;                         // sent first
  std::shared_ptr<const std::string> body;  // then this, when not null; never modified
  bool close = false;
  std::size_t size() const { return head.size() + (body ? body->size() : 0); }
  // Everything to send, copied into one string (for tests).
  std::string bytes() const { return body ? head + *body : head; }
};

// A response whose body is `body`, shared, not copied. head_only: the answer to HEAD, the same
// head (with the body's Content-Length) without the body.
WireResponse shared_response(const ResponseHead& head, std::shared_ptr<const std::string> body,
                             bool head_only = false);

// A small plain response, for the index, health and errors, in one string.
WireResponse text_response(const ResponseHead& head, std::string_view body, bool head_only = false);

// Adds header fields ("Name: value\r\n" each, already checked) to a response made above, at
// the end of its head: the web config's headers (access_gate.hpp) and WWW-Authenticate.
void add_header_field(WireResponse& response, std::string_view fields);

}  // namespace memdiag::http
