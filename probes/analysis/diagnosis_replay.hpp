// SPDX-License-Identifier: Apache-2.0
// The diagnosis run over snapshots someone else took (a recording, `memdiagd diagnose
// --replay`): each one is assessed with the ring of those before it, exactly as the sampler
// assesses a live sample, so a replay gives the report the daemon gave (with the settings the
// replay is given, which lets a person try other thresholds on a recorded incident).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "probes/analysis/diagnosis_model.hpp"
#include "probes/analysis/diagnosis_settings.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag::analysis {

class DiagnosisReplay {
 public:
  DiagnosisReplay(const DiagnosisSettings& settings, std::size_t ring_capacity);

  // Assesses the next snapshot (its derived figures are replaced) and keeps it in the ring.
  // Returns the transitions it made, as the daemon logs them.
  std::vector<VerdictTransition> add(std::shared_ptr<Snapshot> snapshot);

  // The last snapshot added, assessed; null before the first.
  SnapshotPtr latest() const { return store_.latest(); }

 private:
  DiagnosisModel model_;
  SnapshotStore store_;
};

}  // namespace memdiag::analysis
