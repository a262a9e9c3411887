#include "probes/linux/linux_sources.hpp"

#include "probes/linux/meminfo_source.hpp"
#include "probes/linux/pressure_source.hpp"
#include "probes/linux/vm_sysctl_source.hpp"
#include "probes/linux/vmstat_source.hpp"

namespace memdiag {

const std::vector<std::string_view>& linux_source_names() {
  static const std::vector<std::string_view> kNames = {"meminfo", "vmstat", "pressure", "vm_sysctl"};
  return kNames;
}

bool linux_source_has_refresh_interval(std::string_view name) { return name == "vm_sysctl"; }

std::unique_ptr<Source> make_linux_source(std::string_view name, const KernelPaths& paths,
                                          const SourceOptions& options) {
  if (name == "meminfo") return std::make_unique<MeminfoSource>(paths.procfs);
  if (name == "vmstat") return std::make_unique<VmstatSource>(paths.procfs);
  if (name == "pressure") return std::make_unique<PressureSource>(paths.procfs);
  if (name == "vm_sysctl") return std::make_unique<VmSysctlSource>(paths.procfs, options.refresh_interval);
  return nullptr;
}

}  // namespace memdiag
