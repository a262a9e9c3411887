// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/vm_sysctl_registration.hpp"

#include <string>

#include "probes/linux/node/vm_sysctl_source.hpp"

namespace memdiag {

SourceRegistration vm_sysctl_registration() {
  return register_source(SourceSpec<VmSysctlOptions>{
      .name = "vm_sysctl",
      .platform = Platform::kLinux,
      .keys = {{"refresh_interval",
                [](const OptionValue& value, VmSysctlOptions& options) -> OptionStatus {
                  auto refresh = value.duration();
                  if (!refresh) return refresh.error();
                  if (*refresh < std::chrono::milliseconds(0) || *refresh > std::chrono::hours(1)) {
                    return value.refuse("must be between 0s (every sample) and 1h, got " +
                                        std::to_string(refresh->count()) + "ms");
                  }
                  options.refresh_interval = *refresh;
                  return Ok{};
                }}},
      .make = [](const SourceContext& context, const VmSysctlOptions& options) -> std::unique_ptr<Source> {
        return std::make_unique<VmSysctlSource>(context.paths.procfs, options.refresh_interval);
      },
      // Its promise: a SIGHUP re-reads the sysctls at once.
      .rebuild_on_reload = true,
  });
}

}  // namespace memdiag
