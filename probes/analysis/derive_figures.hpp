// Fills a snapshot's DerivedFigures from its sections: called once per sample, after every
// source has sampled and before the snapshot is published.
#pragma once

#include "probes/analysis/overcommit_model.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::analysis {

void derive_figures(Snapshot& snapshot, const OvercommitThresholds& thresholds = {});

}  // namespace memdiag::analysis
