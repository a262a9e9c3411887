#include "probes/analysis/derive_figures.hpp"

#include "probes/analysis/limit_overcommit.hpp"

namespace memdiag::analysis {

void derive_figures(Snapshot& snapshot) {
  DerivedFigures& derived = snapshot.derived;
  derived = {};
  if (snapshot.cgroups && snapshot.system_memory) {
    derived.cgroup_limit_overcommit_ratio = limit_overcommit_ratio(*snapshot.cgroups, *snapshot.system_memory);
  }
}

}  // namespace memdiag::analysis
