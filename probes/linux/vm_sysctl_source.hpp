#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {

// The vm.* sysctls that decide how the kernel promises, reclaims and limits memory.
// Sysctls an older kernel does not have are skipped; a present but unreadable or malformed
// one marks the source down.
class VmSysctlSource final : public Source {
 public:
  explicit VmSysctlSource(const std::string& procfs_root);
  std::string_view name() const override { return "vm_sysctl"; }
  Status probe() override;
  Status sample(Snapshot& out) override;

  // Names as they appear under /proc/sys/vm (and in the `name` label).
  static const std::vector<std::string_view>& known_sysctls();

 private:
  std::string directory_;
  std::vector<KernelFile> files_;  // parallel to known_sysctls()
};

}  // namespace memdiag
