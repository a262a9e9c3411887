// SPDX-License-Identifier: Apache-2.0
// The vmstat source: every field of <procfs>/vmstat, event counters and nr_* levels.
#pragma once

#include "probes/core/source_registration.hpp"

namespace memdiag {

SourceRegistration vmstat_registration();

}  // namespace memdiag
