// SPDX-License-Identifier: Apache-2.0
// The canary's config keys that Linux's and Windows's canaries share (`sources.canary`):
// interval, working_set_bytes, ceiling_bytes, and the rule that holds them together. Portable,
// so both registrations read them the same way and refuse the same values with the same words.
#pragma once

#include <optional>

#include "probes/canary/canary_settings.hpp"
#include "probes/core/source_registration.hpp"

namespace memdiag::canary {

OptionStatus read_interval(const OptionValue& value, CanarySettings& settings);          // 100ms .. 1h
OptionStatus read_working_set_bytes(const OptionValue& value, CanarySettings& settings);  // 4 KiB .. 1 GiB
OptionStatus read_ceiling_bytes(const OptionValue& value, CanarySettings& settings);      // 4 KiB .. 1 GiB
// The working set at least 1 MiB below the ceiling: the allocator rounds small classes up to
// whole spans, and every cycle must stay under the ceiling.
std::optional<KeyRefusal> check_sizes(const CanarySettings& settings);

}  // namespace memdiag::canary
