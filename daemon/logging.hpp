// spdlog to stderr (journald adds its own timestamps and picks stderr up as the unit's log).
#pragma once

#include <string>

namespace memdiag {

void setup_logging();
// `level` must have passed check_log_level.
void set_log_level(const std::string& level);

}  // namespace memdiag
