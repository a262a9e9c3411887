// SPDX-License-Identifier: Apache-2.0
// The diagnosis report (`memdiagd diagnose`, /api/v1/diagnosis): the verdicts with their
// evidence, contributors and victims with their relief, the overcommit picture and what the
// node's mode means, the promise holders, the timeline of recent transitions and the next
// steps, from one snapshot. JSON for tools (schema: docs/diagnose.md "Diagnosis report"), text for a
// person on call (80 columns).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "probes/core/snapshot.hpp"

namespace memdiag::report {

inline constexpr std::string_view kDiagnosisSchema = "memdiag.diagnosis/v1";

struct ReportOptions {
  // Transitions older than this (before the snapshot's time) are left out of the timeline.
  std::optional<std::chrono::milliseconds> since;
  // What the report came from: "daemon", "local" (sampled by diagnose itself) or "replay".
  std::string_view origin = "daemon";
};

std::string render_diagnosis_json(const Snapshot& snapshot, const ReportOptions& options);
std::string render_diagnosis_text(const Snapshot& snapshot, const ReportOptions& options);

}  // namespace memdiag::report
