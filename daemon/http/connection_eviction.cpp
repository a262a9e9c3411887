// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/connection_eviction.hpp"

namespace memdiag::http {
namespace {

int rank(Standing s) {
  switch (s) {
    case Standing::kClosing: return 0;
    case Standing::kNoRequestYet:
    case Standing::kIdle:
    case Standing::kPartialHead: return 1;
    case Standing::kResponding: return 2;
  }
  return 2;
}

}  // namespace

std::size_t choose_eviction(const std::vector<EvictionCandidate>& candidates) {
  std::size_t best = kNoEviction;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const EvictionCandidate& c = candidates[i];
    if (best == kNoEviction) {
      best = i;
      continue;
    }
    const int r = rank(c.standing);
    const int best_rank = rank(candidates[best].standing);
    if (r < best_rank || (r == best_rank && c.since < candidates[best].since)) best = i;
  }
  return best;
}

}  // namespace memdiag::http
