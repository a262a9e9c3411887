// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/bcrypt_check.hpp"

#include <crypt.h>
#include <openssl/crypto.h>

#include <cstring>
#include <memory>

namespace memdiag::http {

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  constexpr std::size_t kBcryptMaxBytes = 72;
  if (password.size() > kBcryptMaxBytes || password.find('\0') != std::string_view::npos) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB of scratch, zeroed as crypt_rn asks
  std::string phrase(password);
  const char* result = crypt_rn(phrase.c_str(), hash.c_str(), data.get(), sizeof *data);
  // Every byte compared whatever the first difference: how long this takes says nothing about
  // how close a guess came.
  const bool matches =
      result != nullptr && std::strlen(result) == hash.size() && CRYPTO_memcmp(result, hash.data(), hash.size()) == 0;
  OPENSSL_cleanse(phrase.data(), phrase.size());
  OPENSSL_cleanse(data.get(), sizeof *data);
  return matches;
}

}  // namespace memdiag::http
