// SPDX-License-Identifier: Apache-2.0
// The cgroup source (`sources.cgroup`): its options, their validation and its factory.
#pragma once

#include "probes/core/source_registration.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"

namespace memdiag {

SourceRegistration cgroup_registration();

}  // namespace memdiag
