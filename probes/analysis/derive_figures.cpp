#include "probes/analysis/derive_figures.hpp"

#include "probes/analysis/limit_overcommit.hpp"
#include "probes/analysis/overcommit_model.hpp"

namespace memdiag::analysis {

void derive_figures(Snapshot& snapshot, const OvercommitThresholds& thresholds) {
  DerivedFigures& derived = snapshot.derived;
  derived = {};
  if (snapshot.cgroups && snapshot.system_memory) {
    derived.cgroup_limit_overcommit_ratio = limit_overcommit_ratio(*snapshot.cgroups, *snapshot.system_memory);
  }
  if (snapshot.system_memory) {
    derived.overcommit = assess_overcommit(*snapshot.system_memory, snapshot.overcommit_policy,
                                           derived.cgroup_limit_overcommit_ratio, thresholds);
  }
}

}  // namespace memdiag::analysis
