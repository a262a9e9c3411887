// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/vmstat_registration.hpp"

#include "probes/linux/field_table_source.hpp"
#include "probes/linux/node/vmstat_parser.hpp"

namespace memdiag {

SourceRegistration vmstat_registration() {
  return register_source(SourceSpec<NoOptions>{
      .name = "vmstat",
      .platform = Platform::kLinux,
      .make = [](const SourceContext& context, const NoOptions&) -> std::unique_ptr<Source> {
        return std::make_unique<FieldTableSource<VmstatEntry>>(
            "vmstat", KernelFile(context.paths.procfs + "/vmstat", KernelFile::Reads::kUntilEnd), &parse_vmstat,
            [](const VmstatEntry& e) {
              return vmstat_field_is_counter(e.name) ? FieldKind::kCounter : FieldKind::kGauge;
            },
            &Snapshot::vmstat);
      },
  });
}

}  // namespace memdiag
