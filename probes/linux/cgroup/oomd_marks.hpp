// SPDX-License-Identifier: Apache-2.0
// The marks userspace OOM killers leave on a cgroup they kill, as extended attributes on its
// directory: systemd-oomd increments user.oomd_ooms before a kill and adds the processes it
// killed to user.oomd_kill; oomd does the same under trusted.* (newer oomd under both). One
// listxattr per cgroup, and a getxattr only for the marks present (a cgroup never killed has
// none). trusted.* needs CAP_SYS_ADMIN to be listed or read: without it oomd's marks are unseen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probes/core/cgroup_section.hpp"

namespace memdiag {

// The count an oomd mark holds: decimal, as both killers write it (trailing NUL or newline
// allowed); nullopt otherwise.
std::optional<std::uint64_t> parse_oomd_mark(std::string_view value);

// Fills out.oomd_user_kills and out.oomd_trusted_kills from the directory `dir`: the processes
// killed, or the kill actions where no process count was written.
void read_oomd_marks(const std::string& dir, CgroupSample& out);

}  // namespace memdiag
