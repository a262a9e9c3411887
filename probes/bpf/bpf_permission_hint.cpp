// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/bpf_permission_hint.hpp"

#include "probes/linux/kernel_file.hpp"
#include "probes/linux/text_scan.hpp"

namespace memdiag {

namespace {

using text::excerpt;
using text::line_error;
using text::next_line;
using text::parse_u64;
using text::trim;

constexpr const char* kNeeds = "needs CAP_BPF and CAP_PERFMON";
// <linux/capability.h>; CAP_SYS_ADMIN stands in for both (bpf_capable(), perfmon_capable()).
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

bool holds(std::uint64_t mask, int capability) { return (mask >> capability) & 1U; }

Expected<std::uint64_t> parse_hex_mask(std::string_view digits) {
  if (digits.empty() || digits.size() > 16) return make_error("not a 64-bit hex mask: " + excerpt(digits));
  std::uint64_t mask = 0;
  for (char c : digits) {
    int value = 0;
    if (c >= '0' && c <= '9') {
      value = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      value = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      value = c - 'A' + 10;
    } else {
      return make_error("not a 64-bit hex mask: " + excerpt(digits));
    }
    mask = (mask << 4) | static_cast<std::uint64_t>(value);
  }
  return mask;
}

}  // namespace

Expected<BpfPermissionFooting> parse_bpf_permission_footing(std::string_view proc_status) {
  BpfPermissionFooting footing;
  bool saw_effective = false;
  std::string_view rest = proc_status;
  std::string_view line;
  std::size_t line_number = 0;
  while (next_line(rest, line)) {
    ++line_number;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "CapEff") {
      auto mask = parse_hex_mask(value);
      if (!mask) return line_error(line_number, line, mask.error().message);
      footing.effective_capabilities = *mask;
      saw_effective = true;
    } else if (key == "Seccomp" || key == "NoNewPrivs") {
      auto number = parse_u64(value);
      if (!number || *number > 2) return line_error(line_number, line, "expected 0, 1 or 2");
      if (key == "Seccomp") {
        footing.seccomp_mode = static_cast<int>(*number);
      } else {
        footing.no_new_privs = *number != 0;
      }
    }
  }
  if (!saw_effective) return make_error("no CapEff line");
  return footing;
}

std::string bpf_permission_hint(const BpfPermissionFooting& footing) {
  const std::uint64_t caps = footing.effective_capabilities;
  const bool bpf = holds(caps, kCapBpf) || holds(caps, kCapSysAdmin);
  const bool perfmon = holds(caps, kCapPerfmon) || holds(caps, kCapSysAdmin);
  if (!bpf || !perfmon) {
    std::string hint = kNeeds;
    hint += !bpf && !perfmon ? "; the loader holds neither" : bpf ? "; the loader lacks CAP_PERFMON" : "; the loader lacks CAP_BPF";
    // Under no_new_privs an executed program gains no file capabilities: the loader holds at
    // most what the daemon kept permitted and inheritable (or ambient).
    if (footing.no_new_privs) hint += " (no_new_privs is set: it can only inherit them from the daemon)";
    return hint;
  }
  if (footing.seccomp_mode != 0) {
    return "the loader holds CAP_BPF and CAP_PERFMON but runs under a seccomp filter, which likely refused bpf(): "
           "allow the call (systemd: SystemCallFilter=bpf)";
  }
  return "the loader holds CAP_BPF and CAP_PERFMON and no seccomp filter applies: a security module "
         "(lockdown, SELinux, AppArmor) likely refused the call";
}

std::string bpf_permission_hint() {
  std::string buffer;
  auto text = read_file_once("/proc/self/status", buffer);
  if (!text) return kNeeds;
  auto footing = parse_bpf_permission_footing(*text);
  return footing ? bpf_permission_hint(*footing) : std::string(kNeeds);
}

}  // namespace memdiag
