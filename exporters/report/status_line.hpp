// SPDX-License-Identifier: Apache-2.0
// One line saying where the node stands, for a service manager's status (systemd's STATUS=,
// shown by `systemctl status memdiagd`): the stall and overcommit levels with their first
// reason, and how many sources are up. Derived from the snapshot alone, like the reports.
#pragma once

#include <string>

#include "probes/core/snapshot.hpp"

namespace memdiag::report {

// "stall none; overcommit low (unbacked_promises); 9/10 sources up (not up: reclaim_stall)"
std::string status_line(const Snapshot& snapshot);

}  // namespace memdiag::report
