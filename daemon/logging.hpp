// SPDX-License-Identifier: Apache-2.0
// spdlog to stderr, or, when systemd has connected stderr to the journal, to journald directly
// with each line's syslog priority (warnings are PRIORITY=4, errors 3); and to a file where
// asked (--log.file; the Windows service, which has no console, always).
#pragma once

#include <string>

#include "probes/core/expected.hpp"

namespace memdiag {

void setup_logging();
// Sends the log to `path` as well (appended, created with its folder if missing).
Status add_log_file(const std::string& path);
// `level` must have passed check_log_level.
void set_log_level(const std::string& level);

}  // namespace memdiag
