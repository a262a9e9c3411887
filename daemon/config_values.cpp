// SPDX-License-Identifier: Apache-2.0
#include "daemon/config_values.hpp"

#ifdef _WIN32
#include <ws2tcpip.h>  // inet_pton
#else
#include <arpa/inet.h>
#endif

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace memdiag {

Expected<std::chrono::milliseconds> parse_duration(std::string_view text) {
  const std::string hint = "expected a duration like 500ms, 1s, 2m or 1h, got '" + std::string(text) + "'";
  std::size_t split = 0;
  while (split < text.size() && ((text[split] >= '0' && text[split] <= '9') || text[split] == '.')) ++split;
  const std::string_view number = text.substr(0, split);
  const std::string_view unit = text.substr(split);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) return make_error(hint);
  double ms_per_unit = 0;
  if (unit == "ms") {
    ms_per_unit = 1;
  } else if (unit == "s") {
    ms_per_unit = 1000;
  } else if (unit == "m") {
    ms_per_unit = 60 * 1000;
  } else if (unit == "h") {
    ms_per_unit = 3600 * 1000;
  } else {
    return make_error(hint);
  }
  const double ms = value * ms_per_unit;
  if (!std::isfinite(ms) || ms > 1e12) return make_error("duration too long: '" + std::string(text) + "'");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(ms)));
}

Expected<std::chrono::milliseconds> parse_command_line_duration(std::string_view text) {
  const bool bare_number =
      !text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos;
  if (!bare_number) return parse_duration(text);
  return parse_duration(std::string(text) + "s");
}

Status check_listen_address(std::string_view address) {
  const std::string shown = "'" + std::string(address) + "'";
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return make_error("expected HOST:PORT (for example 127.0.0.1:9842), got " + shown);
  const std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  int port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 ||
      port > 65535) {
    return make_error("port must be a number in 1..65535, got " + shown);
  }
  if (!host.empty() && host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return make_error("IPv6 host must be in brackets, got " + shown);
    // Only an IPv6 literal between the brackets: the listener resolves nothing else there.
    const std::string v6(host.substr(1, host.size() - 2));
    for (char c : v6) {  // also keeps an embedded NUL from cutting the string short for inet_pton
      const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex && c != ':' && c != '.') return make_error("not an IPv6 address in " + shown);
    }
    in6_addr parsed{};
    if (inet_pton(AF_INET6, v6.c_str(), &parsed) != 1) return make_error("not an IPv6 address in " + shown);
    return Ok{};
  }
  // Numeric only: a name may resolve to several addresses ("localhost" to ::1 and
  // 127.0.0.1) and the listener binds one, so scrapes to the others would be refused.
  if (host.empty()) return Ok{};
  const std::string v4(host);
  in_addr parsed{};
  if (v4.find('\0') != std::string::npos || inet_pton(AF_INET, v4.c_str(), &parsed) != 1) {
    return make_error("host must be a numeric address (127.0.0.1, 0.0.0.0, [::1], [::]), not a name, got " + shown);
  }
  return Ok{};
}

Status check_log_level(std::string_view level) {
  static const std::vector<std::string_view> kLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (std::find(kLevels.begin(), kLevels.end(), level) != kLevels.end()) return Ok{};
  return make_error("expected one of trace, debug, info, warn, error, critical, off; got '" + std::string(level) + "'");
}

Status check_directory_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return make_error("expected an absolute path, got '" + std::string(path) + "'");
  return Ok{};
}

Status check_unix_socket_path(std::string_view path) {
  if (path.empty()) return Ok{};
  // Relative to what? The daemon's working directory is "/" under systemd and anything by hand,
  // and diagnose must find the same file from wherever it runs.
  if (path.front() != '/') return make_error("expected an absolute path, got '" + std::string(path) + "'");
  if (path.find('\0') != std::string_view::npos) return make_error("a path cannot hold a NUL byte");
  if (path.back() == '/') return make_error("names a directory, not a socket file: '" + std::string(path) + "'");
  if (path.size() > kMaxUnixSocketPath) {
    return make_error("longer than a Unix socket address holds (" + std::to_string(kMaxUnixSocketPath) + " bytes), got " +
                      std::to_string(path.size()));
  }
  return Ok{};
}

Status check_interval(std::chrono::milliseconds interval) {
  if (interval < kMinInterval || interval > kMaxInterval) {
    return make_error("must be between 100ms and 1h, got " + std::to_string(interval.count()) + "ms");
  }
  return Ok{};
}

Status check_ring(long long ring) {
  if (ring < 1 || ring > static_cast<long long>(kMaxRing)) {
    return make_error("must be between 1 and " + std::to_string(kMaxRing) + ", got " + std::to_string(ring));
  }
  return Ok{};
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace memdiag
