// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/meminfo_registration.hpp"

#include "probes/linux/field_table_source.hpp"
#include "probes/linux/node/meminfo_parser.hpp"
#include "probes/linux/node/meminfo_system_memory.hpp"

namespace memdiag {

SourceRegistration meminfo_registration() {
  return register_source(SourceSpec<NoOptions>{
      .name = "meminfo",
      .platform = Platform::kLinux,
      .make = [](const SourceContext& context, const NoOptions&) -> std::unique_ptr<Source> {
        return std::make_unique<FieldTableSource<MeminfoEntry>>(
            "meminfo", KernelFile(context.paths.procfs + "/meminfo", KernelFile::Reads::kOneRecord), &parse_meminfo,
            [](const MeminfoEntry& e) { return e.in_bytes ? FieldKind::kBytes : FieldKind::kCount; },
            &Snapshot::meminfo,
            [system = std::make_shared<MeminfoSystemMemory>()](const FieldTable& table, Snapshot& out) {
              out.system_memory = system->from(table);
            });
      },
  });
}

}  // namespace memdiag
