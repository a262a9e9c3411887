// SPDX-License-Identifier: Apache-2.0
// The "about to break" verdict in the diagnosis report (probes/core/breaking_verdict.hpp): its
// JSON section, its lines in the text report and its next steps, rendered from the verdict
// alone so the JSON, the text, the page and the steps say the same.
#pragma once

#include <string>
#include <vector>

#include "exporters/report/json_writer.hpp"
#include "probes/core/breaking_verdict.hpp"

namespace memdiag::report {

// The "breaking" object: level, oom_window_seconds, items (kind, level, subject, pid, comm,
// cgroup, value, limit, ratio, source, counted_by, explanation) and dropped_items.
void write_breaking_json(JsonWriter& w, const BreakingVerdict& verdict);

// The text report's block: the heading and one sentence per item, each to be wrapped by the
// caller (the heading first, unwrapped).
std::vector<std::string> breaking_text(const BreakingVerdict& verdict);

// What to do about each item, at most one step per kind and subject.
std::vector<std::string> breaking_steps(const BreakingVerdict& verdict);

}  // namespace memdiag::report
