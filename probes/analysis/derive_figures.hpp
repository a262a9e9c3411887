// SPDX-License-Identifier: Apache-2.0
// Fills a snapshot's DerivedFigures from its sections: called once per sample, after every
// source has sampled and before the snapshot is published.
#pragma once

#include "probes/analysis/overcommit_model.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag::analysis {

void derive_figures(Snapshot& snapshot, const OvercommitThresholds& thresholds = {});

// What of the node's unbacked promise cannot come due (overcommit_model.hpp), from the process
// scan (copy-on-write sharing, uncharged reservations) and the cgroup limit tree (what limits
// cap, the cgroups promised beyond their limits).
PromiseAdjustments promise_adjustments(const Snapshot& snapshot);

}  // namespace memdiag::analysis
