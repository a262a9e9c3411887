// SPDX-License-Identifier: Apache-2.0
// Which connection to drop when the server is at its connection cap and another arrives.
// Refusing the newcomer would let whoever holds the cap keep Prometheus out. Instead the
// connection that has waited longest for its client goes: a scraper's request is read as
// soon as it is accepted (server.cpp), so its wait is always the newest, whatever the others
// hold. Ranking connections without a request below idle kept-alive ones (as before) let 512
// kept-alive idlers plus a flood of new connections evict every scraper before it was read.
// A pure function, so the order is tested.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace memdiag::http {

// Where a connection stands. kClosing goes first, kResponding last; the three waits in
// between are one rank, ordered by when the wait began.
enum class Standing {
  kClosing,       // answered, draining the rest before closing: nothing is lost
  kNoRequestYet,  // connected but never completed a request head
  kIdle,          // served, kept alive, waiting for the next request
  kPartialHead,   // served, now in the middle of the next request head
  kResponding,    // sending a response the client is slow to take: dropped only when every
                  // connection is (else clients that ask and never read would hold the cap)
};

struct EvictionCandidate {
  Standing standing;
  // When its current wait began: accepting it, or the first byte of its next head (bytes
  // trickled in after that do not make it younger); the start of its idle time; the last
  // bytes of its response the client took.
  std::chrono::steady_clock::time_point since;
};

inline constexpr std::size_t kNoEviction = static_cast<std::size_t>(-1);

// Index of the candidate to drop: closing ones first, then the oldest wait among those
// without a response in flight, then the longest stalled response; kNoEviction when there
// is none. The caller leaves the connection just accepted out of the candidates.
std::size_t choose_eviction(const std::vector<EvictionCandidate>& candidates);

}  // namespace memdiag::http
