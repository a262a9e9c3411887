// SPDX-License-Identifier: Apache-2.0
// The query of /api/v1/diagnosis: `format=json|text` (json by default) and `since=DURATION`
// (the timeline's reach, "5m"; all kept transitions without it). Anything else is refused, so
// a mistyped parameter is not silently ignored.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag::http {

struct DiagnosisQuery {
  bool text = false;
  std::optional<std::chrono::milliseconds> since;
};

// `query` is what follows '?' in the target (may be empty).
Expected<DiagnosisQuery> parse_diagnosis_query(std::string_view query);

}  // namespace memdiag::http
