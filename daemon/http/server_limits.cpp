// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/server_limits.hpp"

#include <algorithm>

namespace memdiag::http {

std::size_t connection_cap(std::size_t wanted, unsigned long long descriptor_limit) {
  const unsigned long long quarter = descriptor_limit / 4;
  return static_cast<std::size_t>(std::max<unsigned long long>(16, std::min<unsigned long long>(wanted, quarter)));
}

}  // namespace memdiag::http
