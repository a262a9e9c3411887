// SPDX-License-Identifier: Apache-2.0
#include "daemon/privileges/capabilities.hpp"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace memdiag::privileges {
namespace {

constexpr std::array<std::string_view, 41> kNames = {
    "cap_chown",           "cap_dac_override",   "cap_dac_read_search", "cap_fowner",
    "cap_fsetid",          "cap_kill",           "cap_setgid",          "cap_setuid",
    "cap_setpcap",         "cap_linux_immutable", "cap_net_bind_service", "cap_net_broadcast",
    "cap_net_admin",       "cap_net_raw",        "cap_ipc_lock",        "cap_ipc_owner",
    "cap_sys_module",      "cap_sys_rawio",      "cap_sys_chroot",      "cap_sys_ptrace",
    "cap_sys_pacct",       "cap_sys_admin",      "cap_sys_boot",        "cap_sys_nice",
    "cap_sys_resource",    "cap_sys_time",       "cap_sys_tty_config",  "cap_mknod",
    "cap_lease",           "cap_audit_write",    "cap_audit_control",   "cap_setfcap",
    "cap_mac_override",    "cap_mac_admin",      "cap_syslog",          "cap_wake_alarm",
    "cap_block_suspend",   "cap_audit_read",     "cap_perfmon",         "cap_bpf",
    "cap_checkpoint_restore"};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

std::string capability_name(int capability) {
  if (capability >= 0 && static_cast<std::size_t>(capability) < kNames.size()) return std::string(kNames[capability]);
  return "cap_" + std::to_string(capability);
}

std::vector<std::string> capability_names(CapabilityMask mask) {
  std::vector<std::string> names;
  for (int c = 0; c < 64; ++c) {
    if (mask & capability_bit(c)) names.push_back(capability_name(c));
  }
  return names;
}

Expected<CapabilitySets> current_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return make_error(errno_text("capget"));
  const auto join = [](std::uint32_t low, std::uint32_t high) { return CapabilityMask{low} | CapabilityMask{high} << 32; };
  return CapabilitySets{.effective = join(data[0].effective, data[1].effective),
                        .permitted = join(data[0].permitted, data[1].permitted),
                        .inheritable = join(data[0].inheritable, data[1].inheritable)};
}

Expected<CapabilitySets> narrow_capabilities(CapabilityMask effective, CapabilityMask permitted,
                                             CapabilityMask bounding) {
  auto now = current_capabilities();
  if (!now) return now;
  // The bounding set first: dropping from it needs CAP_SETPCAP, which the capset below removes.
  if (now->effective & capability_bit(kCapSetpcap)) {
    for (int c = 0; c < 64; ++c) {
      if (bounding & capability_bit(c)) continue;
      const int in_bounding = ::prctl(PR_CAPBSET_READ, c, 0, 0, 0);
      if (in_bounding < 0) break;  // past the kernel's last capability
      if (in_bounding == 1 && ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) return make_error(errno_text("PR_CAPBSET_DROP"));
    }
  }
  const CapabilitySets next{.effective = now->permitted & permitted & effective,
                            .permitted = now->permitted & permitted,
                            .inheritable = now->inheritable & permitted};
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  for (int word = 0; word < 2; ++word) {
    data[word].effective = static_cast<std::uint32_t>(next.effective >> (32 * word));
    data[word].permitted = static_cast<std::uint32_t>(next.permitted >> (32 * word));
    data[word].inheritable = static_cast<std::uint32_t>(next.inheritable >> (32 * word));
  }
  if (::syscall(SYS_capset, &header, data) != 0) return make_error(errno_text("capset"));
  return current_capabilities();
}

}  // namespace memdiag::privileges
