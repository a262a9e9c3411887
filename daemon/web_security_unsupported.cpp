// SPDX-License-Identifier: Apache-2.0
// load_web_security where there is no OpenSSL (the Windows build): every web config is refused,
// before anything listens, with the reason.
#include "daemon/web_security.hpp"

namespace memdiag {

bool web_security_supported() { return false; }

WebSecurityResult load_web_security(const std::string& path) {
  return ConfigError{path, 0, "",
                     "a web config (TLS, basic auth) is not supported by this build of memdiagd (the Windows build has "
                     "no OpenSSL); serve it behind a TLS-terminating proxy instead"};
}

}  // namespace memdiag
