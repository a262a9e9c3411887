// SPDX-License-Identifier: Apache-2.0
// The thresholds of every verdict, as the config's `diagnosis:` section sets them (defaults and
// their reasons: stall_model.hpp, overcommit_model.hpp, pressure_roles.hpp, forecast.hpp and docs/diagnosis.md).
#pragma once

#include "probes/analysis/breaking_model.hpp"
#include "probes/analysis/forecast.hpp"
#include "probes/analysis/overcommit_model.hpp"
#include "probes/analysis/pressure_roles.hpp"
#include "probes/analysis/stall_model.hpp"

namespace memdiag::analysis {

struct DiagnosisSettings {
  StallThresholds stall;
  OvercommitThresholds overcommit;
  RoleSettings roles;
  ForecastSettings forecast;
  BreakingSettings breaking;
  bool operator==(const DiagnosisSettings&) const = default;
};

}  // namespace memdiag::analysis
