// SPDX-License-Identifier: Apache-2.0
// The windows_paging source: the \Memory paging counters from PDH, raw and
// cumulative (WindowsPagingSection), so rates come from the snapshot ring as on Linux. A
// counter the system lacks is left out and named once; with none of them (wine, a damaged
// performance registry) the source is unsupported and says why, and the others go on.
#pragma once

#include "probes/core/source_registration.hpp"

namespace memdiag::windows {

SourceRegistration windows_paging_registration();

}  // namespace memdiag::windows
