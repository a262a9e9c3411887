// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/source.hpp"
#include "probes/core/system_memory_section.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {

// The vm.* sysctls that decide how the kernel promises, reclaims and limits memory.
// Sysctls an older kernel does not have are skipped; a present but unreadable or malformed
// one marks the source down. They change only by an administrator's hand, so the files (25 of
// them, a quarter of a full sample's cost) are re-read every `refresh_interval` and the last
// values served in between.
class VmSysctlSource final : public Source {
 public:
  explicit VmSysctlSource(const std::string& procfs_root,
                          std::chrono::milliseconds refresh_interval = std::chrono::milliseconds(0));
  std::string_view name() const override { return "vm_sysctl"; }
  Status probe() override;
  Status sample(Snapshot& out) override;

  // Names as they appear under /proc/sys/vm (and in the `name` label).
  static const std::vector<std::string_view>& known_sysctls();

 private:
  std::string directory_;
  Status read_all(VmSysctlSection& section);

  std::vector<KernelFile> files_;  // parallel to known_sysctls()
  std::chrono::milliseconds refresh_interval_;
  std::optional<VmSysctlSection> last_;
  std::optional<OvercommitPolicy> last_policy_;  // derived from last_
  std::chrono::steady_clock::time_point last_read_;
};

// The OS-neutral overcommit policy from vm.overcommit_memory, _ratio and _kbytes; absent
// without overcommit_memory or with a mode this code does not know.
std::optional<OvercommitPolicy> overcommit_policy_from(const VmSysctlSection& sysctls);

}  // namespace memdiag
