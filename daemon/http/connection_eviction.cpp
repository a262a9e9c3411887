#include "daemon/http/connection_eviction.hpp"

namespace memdiag::http {

std::size_t choose_eviction(const std::vector<EvictionCandidate>& candidates) {
  std::size_t best = kNoEviction;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const EvictionCandidate& c = candidates[i];
    if (best == kNoEviction || c.standing < candidates[best].standing ||
        (c.standing == candidates[best].standing && c.since < candidates[best].since)) {
      best = i;
    }
  }
  return best;
}

}  // namespace memdiag::http
