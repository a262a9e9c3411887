#include "probes/linux/linux_sources.hpp"

#include "probes/linux/cgroup_source.hpp"
#include "probes/linux/field_table_source.hpp"
#include "probes/linux/meminfo_parser.hpp"
#include "probes/linux/pressure_source.hpp"
#include "probes/linux/vm_sysctl_source.hpp"
#include "probes/linux/vmstat_parser.hpp"

namespace memdiag {
namespace {

// Every field of <procfs>/meminfo, kB values in bytes.
std::unique_ptr<Source> make_meminfo_source(const std::string& procfs) {
  return std::make_unique<FieldTableSource<MeminfoEntry>>(
      "meminfo", KernelFile(procfs + "/meminfo", KernelFile::Reads::kOneRecord), &parse_meminfo,
      [](const MeminfoEntry& e) { return e.in_bytes ? FieldKind::kBytes : FieldKind::kCount; }, &Snapshot::meminfo);
}

// Every field of <procfs>/vmstat: event counters and nr_* levels.
std::unique_ptr<Source> make_vmstat_source(const std::string& procfs) {
  return std::make_unique<FieldTableSource<VmstatEntry>>(
      "vmstat", KernelFile(procfs + "/vmstat", KernelFile::Reads::kUntilEnd), &parse_vmstat,
      [](const VmstatEntry& e) { return vmstat_field_is_counter(e.name) ? FieldKind::kCounter : FieldKind::kGauge; },
      &Snapshot::vmstat);
}

}  // namespace

const std::vector<std::string_view>& linux_source_names() {
  static const std::vector<std::string_view> kNames = {"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup"};
  return kNames;
}

bool linux_source_has_refresh_interval(std::string_view name) { return name == "vm_sysctl"; }

std::unique_ptr<Source> make_linux_source(std::string_view name, const KernelPaths& paths,
                                          const SourceOptions& options) {
  if (name == "meminfo") return make_meminfo_source(paths.procfs);
  if (name == "vmstat") return make_vmstat_source(paths.procfs);
  if (name == "pressure") return std::make_unique<PressureSource>(paths.procfs);
  if (name == "cgroup") return std::make_unique<CgroupSource>(paths, options);
  if (name == "vm_sysctl") return std::make_unique<VmSysctlSource>(paths.procfs, options.refresh_interval);
  return nullptr;
}

}  // namespace memdiag
