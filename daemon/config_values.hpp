// SPDX-License-Identifier: Apache-2.0
// Validation of single config values, shared by the YAML loader and the command-line flags so
// both refuse the same things with the same words.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

// "500ms", "1s", "2m", "1h" (also "1.5s"). Errors say what was expected.
Expected<std::chrono::milliseconds> parse_duration(std::string_view text);

// A duration given on the command line (diagnose, record): as parse_duration, and a bare number
// is seconds ("--duration 5"), as sleep(1) and timeout(1) read one. The config file keeps its
// units: a bare number there is more likely a mistake than a choice.
Expected<std::chrono::milliseconds> parse_command_line_duration(std::string_view text);

// "HOST:PORT", "[V6]:PORT" or ":PORT"; port 1..65535.
Status check_listen_address(std::string_view address);

// trace|debug|info|warn|error|critical|off
Status check_log_level(std::string_view level);

Status check_directory_path(std::string_view path);

// sockaddr_un's sun_path holds 108 bytes on Linux (and Windows' afunix.h), the terminating NUL
// among them.
inline constexpr std::size_t kMaxUnixSocketPath = 107;

// web.unix_socket: empty (none), or an absolute path that fits sun_path.
Status check_unix_socket_path(std::string_view path);

inline constexpr std::chrono::milliseconds kMinInterval{100};
inline constexpr std::chrono::milliseconds kMaxInterval{3600 * 1000};
// A snapshot of the node sources is ~4 KiB: 3600 of them (an hour at 1 s) is ~15 MiB.
inline constexpr std::size_t kMaxRing = 3600;

Status check_interval(std::chrono::milliseconds interval);
Status check_ring(long long ring);

// The closest of `candidates` to `word` if it is a plausible typo, for "did you mean" hints.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace memdiag
