// SPDX-License-Identifier: Apache-2.0
// The credentials of an "Authorization: Basic ..." field (RFC 7617): base64 of "user:password",
// the user ending at the first colon. A pure function over the field's value, so it is tested
// on anything; nullopt for another scheme or anything malformed (then the answer is 401).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace memdiag::http {

struct BasicCredentials {
  std::string user;
  std::string password;
};

std::optional<BasicCredentials> parse_basic_credentials(std::string_view authorization);

}  // namespace memdiag::http
