// Which connection to drop when the server is at its connection cap and another arrives.
// Refusing the newcomer would let whoever holds the cap keep Prometheus out; dropping the
// connection that has waited longest without completing a request keeps room for anyone who
// sends a request at once, which a scraper does. A pure function, so the order is tested.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace memdiag::http {

// Where a connection stands, in the order they are given up (first = dropped first).
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
  std::chrono::steady_clock::time_point since;  // when it entered that standing
};

inline constexpr std::size_t kNoEviction = static_cast<std::size_t>(-1);

// Index of the candidate to drop: the earliest standing in the order above, the oldest
// within it; kNoEviction when there is none.
std::size_t choose_eviction(const std::vector<EvictionCandidate>& candidates);

}  // namespace memdiag::http
