// SPDX-License-Identifier: Apache-2.0
// The pressure source: node PSI from <procfs>/pressure/{memory,io,cpu}.
#pragma once

#include "probes/core/source_registration.hpp"

namespace memdiag {

SourceRegistration pressure_registration();

}  // namespace memdiag
