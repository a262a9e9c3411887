// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/oomd_marks.hpp"

#include <sys/xattr.h>

#include <array>

namespace memdiag {

std::optional<std::uint64_t> parse_oomd_mark(std::string_view value) {
  while (!value.empty() && (value.back() == '\0' || value.back() == '\n')) value.remove_suffix(1);
  if (value.empty() || value.size() > 19) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

namespace {

std::optional<std::uint64_t> read_mark(const std::string& dir, const char* name) {
  std::array<char, 32> value{};
  const ssize_t n = ::getxattr(dir.c_str(), name, value.data(), value.size());
  if (n <= 0) return std::nullopt;
  return parse_oomd_mark(std::string_view(value.data(), static_cast<std::size_t>(n)));
}

bool listed(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const std::size_t end = names.find('\0');
    if (names.substr(0, end) == name) return true;
    if (end == std::string_view::npos) break;
    names.remove_prefix(end + 1);
  }
  return false;
}

// The kills under one namespace ("user." or "trusted."): processes killed, else kill actions.
std::optional<std::uint64_t> kills(const std::string& dir, std::string_view names, const std::string& ns) {
  const std::string kill = ns + "oomd_kill";
  const std::string ooms = ns + "oomd_ooms";
  if (listed(names, kill)) {
    if (auto n = read_mark(dir, kill.c_str())) return n;
  }
  if (listed(names, ooms)) return read_mark(dir, ooms.c_str());
  return std::nullopt;
}

}  // namespace

void read_oomd_marks(const std::string& dir, CgroupSample& out) {
  // Most cgroups carry no attribute at all: the list is empty and that is the only syscall.
  std::array<char, 1024> buffer{};
  const ssize_t n = ::listxattr(dir.c_str(), buffer.data(), buffer.size());
  if (n <= 0) return;
  const std::string_view names(buffer.data(), static_cast<std::size_t>(n));
  out.oomd_user_kills = kills(dir, names, "user.");
  out.oomd_trusted_kills = kills(dir, names, "trusted.");
}

}  // namespace memdiag
