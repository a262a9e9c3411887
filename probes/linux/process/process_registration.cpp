// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/process/process_registration.hpp"

#include "probes/linux/btf_path_option.hpp"
#include "probes/linux/process/process_source.hpp"

namespace memdiag {
SourceRegistration processes_registration(BpfScannerFactory bpf_scanners) {
  return register_source(SourceSpec<ProcessOptions>{
      .name = "processes",
      .platform = Platform::kLinux,
      .keys =
          {
              {"scanner",
               [](const OptionValue& value, ProcessOptions& options) -> OptionStatus {
                 auto scanner = value.text();
                 if (!scanner) return scanner.error();
                 if (*scanner == "auto") {
                   options.process_scan = ProcessScanMode::kAuto;
                 } else if (*scanner == "bpf_iter") {
                   options.process_scan = ProcessScanMode::kBpfIter;
                 } else if (*scanner == "procfs") {
                   options.process_scan = ProcessScanMode::kProcfs;
                 } else {
                   return value.refuse("one of auto, bpf_iter, procfs, got '" + *scanner + "'");
                 }
                 return Ok{};
               }},
              {"btf_path",
               [](const OptionValue& value, ProcessOptions& options) { return read_btf_path(value, options.btf_path); }},
              {"top_n",
               [](const OptionValue& value, ProcessOptions& options) {
                 return read_integer_between(value, 0, 1000, options.top_processes);
               }},
              {"map_areas_threshold",
               [](const OptionValue& value, ProcessOptions& options) -> OptionStatus {
                 auto ratio = value.number();
                 if (!ratio) return ratio.error();
                 if (!(*ratio > 0 && *ratio <= 1)) {
                   return value.refuse("a fraction of vm.max_map_count, above 0 and at most 1, got " +
                                       value.text().value());
                 }
                 options.map_areas_threshold = *ratio;
                 return Ok{};
               }},
              {"max_above_threshold",
               [](const OptionValue& value, ProcessOptions& options) {
                 return read_integer_between(value, 0, 10000, options.max_above_threshold);
               }},
              {"max_cgroups",
               [](const OptionValue& value, ProcessOptions& options) {
                 return read_integer_between(value, 1, 100000, options.max_cgroups);
               }},
          },
      .make = [bpf_scanners = std::move(bpf_scanners)](const SourceContext& context,
                                                        const ProcessOptions& options) -> std::unique_ptr<Source> {
        return std::make_unique<ProcessSource>(context.paths, options,
                                               bpf_scanners ? bpf_scanners(options.btf_path) : BpfScannerOpener{},
                                               own_pid_in(context.paths.procfs));
      },
  });
}

}  // namespace memdiag
