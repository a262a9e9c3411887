// SPDX-License-Identifier: Apache-2.0
// The head of an HTTP/1.x request (request line and header fields), parsed from the bytes a
// connection has received. Pure functions over text, no I/O: the server's event loop calls
// them on whatever arrived, and unit and fuzz tests call them on anything.
//
// Deliberately small: the daemon answers GET and HEAD of a few paths and never reads request
// bodies, so what matters is finding where a head ends without rescanning (find_head_end),
// refusing anything malformed with the right status instead of guessing, and knowing whether
// the connection may be kept alive afterwards.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag::http {

struct HeaderField {
  std::string_view name;   // as sent; compare case-insensitively
  std::string_view value;  // without surrounding spaces and tabs
};

// Views into the text given to parse_request_head: valid while that text is.
struct RequestHead {
  std::string_view method;  // case-sensitive token: "GET", "HEAD", ...
  std::string_view target;  // as sent: "/metrics?x=1", "http://host/metrics" or "*"
  std::string_view path;    // the target's path alone: "/metrics" ("*" for "*")
  int minor_version = 1;    // HTTP/1.<minor_version>
  bool keep_alive = true;   // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "keep-alive"
  bool has_body = false;    // Content-Length > 0 or any Transfer-Encoding: the body is never read
  std::vector<HeaderField> fields;

  // The value of the first field called `name` (case-insensitive), if any.
  std::optional<std::string_view> field(std::string_view name) const;
};

// Why a head was refused: the status to answer with (400, 431 or 505) and what was wrong.
struct HeadError {
  int status = 400;
  std::string message;
};

// Header fields beyond this many are refused with 431, like a head longer than the server's
// limit: no client of /metrics sends more than a dozen.
inline constexpr std::size_t kMaxHeaderFields = 100;

// One past the blank line that ends a head in `received`, or npos while it has not arrived.
// Bytes before `scan_from` were searched already (pass the previous received.size()): each
// byte is looked at about once however the head trickles in.
std::size_t find_head_end(std::string_view received, std::size_t scan_from = 0);

// Parses one complete head, `head` ending with its blank line (as find_head_end delimits it).
// Empty lines before the request line are skipped, as RFC 9112 asks of servers; a bare LF
// ends a line as well as CRLF.
Expected<RequestHead, HeadError> parse_request_head(std::string_view head);

}  // namespace memdiag::http
