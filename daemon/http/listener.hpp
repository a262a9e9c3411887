// SPDX-License-Identifier: Apache-2.0
// The listening socket for web.listen_address: "HOST:PORT" (an IPv4 address or "[IPv6]", never
// a name: one that resolves to several addresses would be bound on one of them only), or
// ":PORT" for every IPv4 interface. Errors are values naming the address and
// the reason ("cannot listen on 127.0.0.1:9842: Address already in use").
#pragma once

#include <string>

#include "daemon/http/native_socket.hpp"
#include "probes/core/expected.hpp"

namespace memdiag::http {

// A bound, listening, non-blocking socket.
Expected<UniqueSocket> listen_on(const std::string& address);

}  // namespace memdiag::http
