// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/credential_cache.hpp"

namespace memdiag::http {
namespace {

// Every byte compared whatever the first difference: a client timing its requests learns
// nothing of how close a password's digest came to a cached one.
bool same_digest(const PasswordDigest& a, const PasswordDigest& b) {
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

}  // namespace

bool CredentialCache::contains(const CredentialKey& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->user == key.user && it->hash == key.hash && same_digest(it->digest, key.digest)) {
      entries_.splice(entries_.begin(), entries_, it);
      return true;
    }
  }
  return false;
}

void CredentialCache::add(CredentialKey key) {
  if (capacity_ == 0 || contains(key)) return;
  entries_.push_front(std::move(key));
  if (entries_.size() > capacity_) entries_.pop_back();
}

}  // namespace memdiag::http
