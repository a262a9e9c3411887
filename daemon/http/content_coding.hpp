// SPDX-License-Identifier: Apache-2.0
// Content codings of /metrics: whether a request takes gzip (Accept-Encoding, RFC 9110 12.5.3:
// "gzip", "x-gzip" or "*", any q but 0). Pure; the compression is gzip_cache.hpp's (Linux: the
// Windows build has no zlib and sends /metrics as it is).
#pragma once

#include <string_view>

#include "daemon/http/request_head.hpp"

namespace memdiag::http {

// Whether an Accept-Encoding value accepts gzip.
bool accepts_gzip(std::string_view accept_encoding);
// The same, from a request's head (no field: identity only).
bool accepts_gzip(const RequestHead& request);

}  // namespace memdiag::http
