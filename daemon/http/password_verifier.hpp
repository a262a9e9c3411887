// SPDX-License-Identifier: Apache-2.0
// Password checks off the HTTP loop thread. A bcrypt check at cost 10 takes tens of
// milliseconds; in the loop it would hold up every other client, so a flood of wrong
// passwords would delay Prometheus' scrapes by as much. Instead one worker thread checks them
// in turn from a bounded queue, and the loop hears of each result through `on_result` (the
// poller's wake-up) and answers that connection then.
//
// One thread: the checks are CPU-bound and this is a small daemon beside the node's work; a
// second would only let a flood take a second core. Bounded: at `capacity` checks waiting (or
// running), submit() refuses and the request is answered 503 at once, so a flood costs at
// most one core and `capacity` x a check of waiting, never memory or the loop's time. The
// right credentials of a scraper are cached after their first check (credential_cache.hpp)
// and never queue again.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "daemon/http/access_gate.hpp"
#include "daemon/http/credential_cache.hpp"

namespace memdiag::http {

struct PasswordCheck {
  ConnectionTicket ticket;
  std::string password;  // wiped once checked
  CredentialKey key;     // what to cache when it matches; key.hash is what it is checked against
  // False for a user that is not configured: it is checked all the same (against a real
  // user's hash, so it takes as long) and never granted, so timing does not tell which users exist.
  bool known_user = true;
};

struct CheckedPassword {
  ConnectionTicket ticket;
  bool granted = false;
  CredentialKey key;
};

class PasswordVerifier {
 public:
  using Matches = std::function<bool(std::string_view password, const std::string& hash)>;

  // `matches`: the check itself (bcrypt_matches; a stand-in in tests). `on_result`: called on
  // the worker thread after each result is ready to take.
  PasswordVerifier(std::size_t capacity, Matches matches, std::function<void()> on_result);
  ~PasswordVerifier();  // waits for the check in progress, drops the rest

  // False when `capacity` checks are already waiting or running. The thread starts at the
  // first check, so a web config without users costs none.
  bool submit(PasswordCheck check);
  std::vector<CheckedPassword> take_results();

  PasswordVerifier(const PasswordVerifier&) = delete;
  PasswordVerifier& operator=(const PasswordVerifier&) = delete;

 private:
  void run();

  const std::size_t capacity_;
  const Matches matches_;
  const std::function<void()> on_result_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<PasswordCheck> queue_;
  std::size_t running_ = 0;
  std::vector<CheckedPassword> results_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace memdiag::http
