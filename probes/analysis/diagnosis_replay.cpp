// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/diagnosis_replay.hpp"

#include <utility>

namespace memdiag::analysis {

DiagnosisReplay::DiagnosisReplay(const DiagnosisSettings& settings, std::size_t ring_capacity)
    : model_(settings), store_(ring_capacity) {}

std::vector<VerdictTransition> DiagnosisReplay::add(std::shared_ptr<Snapshot> snapshot) {
  snapshot->derived = {};
  std::vector<VerdictTransition> transitions = model_.assess(*snapshot, store_.recent());
  store_.publish(std::move(snapshot));
  return transitions;
}

}  // namespace memdiag::analysis
