// SPDX-License-Identifier: Apache-2.0
// The canary source (`sources.canary`): its options, their validation and its factory.
#pragma once

#include "probes/canary/canary_settings.hpp"
#include "probes/core/source_registration.hpp"

namespace memdiag {

SourceRegistration canary_registration();

}  // namespace memdiag
