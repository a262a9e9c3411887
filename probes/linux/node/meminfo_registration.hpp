// SPDX-License-Identifier: Apache-2.0
// The meminfo source: every field of <procfs>/meminfo (kB values in bytes), and the OS-neutral
// system memory section from the same read.
#pragma once

#include "probes/core/source_registration.hpp"

namespace memdiag {

SourceRegistration meminfo_registration();

}  // namespace memdiag
