// SPDX-License-Identifier: Apache-2.0
// Whether a password is the one a bcrypt hash ($2a$, $2b$, $2y$) was made from, with libxcrypt's
// crypt_rn. Deliberately slow (cost 10: tens of milliseconds): the HTTP loop never calls it, the
// access gate's worker thread does (password_verifier.hpp). Linux only.
#pragma once

#include <string>
#include <string_view>

namespace memdiag::http {

// False also for a password bcrypt cannot represent exactly: one with a NUL byte (crypt stops
// there) or longer than bcrypt's 72 bytes (libxcrypt would ignore the rest; Go's bcrypt, which
// the exporter-toolkit uses, refuses it).
bool bcrypt_matches(std::string_view password, const std::string& hash);

}  // namespace memdiag::http
