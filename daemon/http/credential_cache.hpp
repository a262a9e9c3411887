// SPDX-License-Identifier: Apache-2.0
// The credentials that were right lately, so that a scraper's password is checked with bcrypt
// once, not on every scrape (tens of milliseconds each at cost 10). Keyed by the user, a keyed
// digest of the password presented (never the password itself) and the stored hash it matched:
// a new hash for the user in a reloaded web config misses, and is checked again.
//
// Only successes are kept. Failures are what a client guessing passwords controls: caching
// them would help only one that repeats the same wrong password, and would let it push the
// right ones out. Bounded (least recently used out), and used from the loop thread only.
#pragma once

#include <array>
#include <cstddef>
#include <list>
#include <string>

namespace memdiag::http {

using PasswordDigest = std::array<unsigned char, 32>;

struct CredentialKey {
  std::string user;
  PasswordDigest digest{};
  std::string hash;  // the stored bcrypt hash it was checked against
};

class CredentialCache {
 public:
  explicit CredentialCache(std::size_t capacity) : capacity_(capacity) {}

  // Whether `key` was added and not pushed out since; a hit becomes the most recent.
  bool contains(const CredentialKey& key);
  void add(CredentialKey key);
  std::size_t size() const { return entries_.size(); }

 private:
  std::size_t capacity_;
  std::list<CredentialKey> entries_;  // most recent first; a few dozen at most
};

}  // namespace memdiag::http
