// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/canary_setting_keys.hpp"

#include <string>

namespace memdiag::canary {
namespace {

constexpr std::size_t kCeilingMargin = 1u << 20;

OptionStatus read_bytes(const OptionValue& value, std::size_t& out) {
  auto bytes = value.integer();
  if (!bytes) return bytes.error();
  if (*bytes < 4096 || *bytes > (1LL << 30)) {
    return value.refuse("between 4096 and 1073741824 (1 GiB), got " + std::to_string(*bytes));
  }
  out = static_cast<std::size_t>(*bytes);
  return Ok{};
}

}  // namespace

OptionStatus read_interval(const OptionValue& value, CanarySettings& settings) {
  auto interval = value.duration();
  if (!interval) return interval.error();
  if (*interval < std::chrono::milliseconds(100) || *interval > std::chrono::hours(1)) {
    return value.refuse("between 100ms and 1h");
  }
  settings.interval = *interval;
  return Ok{};
}

OptionStatus read_working_set_bytes(const OptionValue& value, CanarySettings& settings) {
  return read_bytes(value, settings.working_set_bytes);
}

OptionStatus read_ceiling_bytes(const OptionValue& value, CanarySettings& settings) {
  return read_bytes(value, settings.ceiling_bytes);
}

std::optional<KeyRefusal> check_sizes(const CanarySettings& settings) {
  if (settings.working_set_bytes + kCeilingMargin > settings.ceiling_bytes) {
    return KeyRefusal{"working_set_bytes",
                      "must be at least 1 MiB below ceiling_bytes (" + std::to_string(settings.ceiling_bytes) + ")"};
  }
  return std::nullopt;
}

}  // namespace memdiag::canary
