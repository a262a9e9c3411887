// SPDX-License-Identifier: Apache-2.0
#include "daemon/privileges/least_privilege.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>

#include <spdlog/spdlog.h>

namespace memdiag::privileges {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

}  // namespace

CapabilityMask loader_capabilities() {
  return capability_bit(kCapBpf) | capability_bit(kCapPerfmon) | capability_bit(kCapDacReadSearch);
}

CapabilityMask own_capabilities(bool keep_ipc_lock, bool bpf_needs_capability, bool keep_net_bind_service) {
  return capability_bit(kCapSysPtrace) | (keep_ipc_lock ? capability_bit(kCapIpcLock) : 0) |
         (bpf_needs_capability ? capability_bit(kCapBpf) | capability_bit(kCapPerfmon) : 0) |
         (keep_net_bind_service ? capability_bit(kCapNetBindService) : 0);
}

bool binds_privileged_port(std::string_view listen_address) {
  const auto colon = listen_address.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view digits = listen_address.substr(colon + 1);
  unsigned port = 0;
  auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  return parsed.ec == std::errc{} && parsed.ptr == digits.data() + digits.size() && port < 1024;
}

bool kernel_allows_bpf_use_without_capability(std::string_view release) {
  int major = 0, minor = 0;
  const char* end = release.data() + release.size();
  auto parsed = std::from_chars(release.data(), end, major);
  if (parsed.ec != std::errc{} || parsed.ptr == end || *parsed.ptr != '.') return false;
  parsed = std::from_chars(parsed.ptr + 1, end, minor);
  if (parsed.ec != std::errc{}) return false;
  return major > 6 || (major == 6 && minor >= 5);
}

LeastPrivilege::LeastPrivilege(PrivilegeSettings settings) : settings_(settings) {
  if (settings_.lock_memory) {
    lock_ = lock_daemon_memory();
    if (lock_.locked) {
      say(spdlog::level::info, fmt::format("memory locked resident (mlockall, on fault){}",
                                           lock_.needs_ipc_lock ? "; keeping CAP_IPC_LOCK, which the lock rests on" : ""));
    } else {
      say(spdlog::level::warn,
          fmt::format("memory not locked: {}; scrapes may wait on reclaim when the node is short of memory", lock_.why_not));
    }
  }
  if (!settings_.drop_capabilities) return;
  utsname name{};
  const bool bpf_needs_capability = !(::uname(&name) == 0 && kernel_allows_bpf_use_without_capability(name.release));
  // Never more than it holds: narrow_capabilities() only lowers.
  const CapabilityMask own = own_capabilities(lock_.needs_ipc_lock, bpf_needs_capability, settings_.binds_privileged_port);
  // The loader's capabilities stay permitted (and inheritable), not effective: a child the
  // daemon executes gets them back from there. As root, exec gives a child the bounding set, but
  // under no_new_privs (systemd's NoNewPrivileges=, which the unit sets) never more than the
  // parent's permitted set; as another user, only the ambient set carries them, and that needs
  // them permitted and inheritable.
  const CapabilityMask permitted = own | loader_capabilities();
  const auto before = current_capabilities();
  auto after = narrow_capabilities(own, permitted, own | loader_capabilities());
  if (!after) {
    say(spdlog::level::warn, "could not drop capabilities: " + after.error().message);
    return;
  }
  const CapabilityMask dropped = before ? before->effective & ~after->effective : 0;
  say(spdlog::level::info,
      fmt::format("capabilities: holding {}{}; for its eBPF loader, permitted only: {}; dropped {}",
                  joined(capability_names(after->effective)),
                  bpf_needs_capability ? " (this kernel needs CAP_BPF to read BPF maps)" : "",
                  joined(capability_names(after->permitted & ~after->effective)),
                  joined(capability_names(dropped & ~after->permitted))));
}

void LeastPrivilege::say(spdlog::level::level_enum level, std::string line) {
  said_.emplace_back(level, std::move(line));
}

void LeastPrivilege::log_what_was_settled() const {
  for (const auto& [level, line] : said_) spdlog::log(level, "{}", line);
}

std::shared_ptr<prom::DaemonPosture> LeastPrivilege::posture() const {
  auto posture = std::make_shared<prom::DaemonPosture>();
  posture->memory_locked = lock_.locked;
  if (lock_.locked) posture->locked_bytes = locked_resident_bytes();
  if (auto caps = current_capabilities()) posture->capabilities = capability_names(caps->effective);
  posture->uid = ::geteuid();
  return posture;
}

}  // namespace memdiag::privileges
