// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/reclaim_stall_registration.hpp"

#include "probes/bpf/bpf_factories.hpp"
#include "probes/linux/btf_path_option.hpp"

namespace memdiag {

SourceRegistration reclaim_stall_registration() {
  return register_source(SourceSpec<ReclaimStallOptions>{
      .name = "reclaim_stall",
      .platform = Platform::kLinux,
      .keys =
          {
              {"btf_path",
               [](const OptionValue& value, ReclaimStallOptions& options) {
                 return read_btf_path(value, options.btf_path);
               }},
              {"tracefs_fallback",
               [](const OptionValue& value, ReclaimStallOptions& options) -> OptionStatus {
                 auto allowed = value.boolean();
                 if (!allowed) return allowed.error();
                 options.tracefs_fallback = *allowed;
                 return Ok{};
               }},
              {"max_cgroups",
               [](const OptionValue& value, ReclaimStallOptions& options) {
                 return read_integer_between(value, 1, 100000, options.max_cgroups);
               }},
              {"retain_removed",
               [](const OptionValue& value, ReclaimStallOptions& options) -> OptionStatus {
                 auto retain = value.duration();
                 if (!retain) return retain.error();
                 if (*retain > std::chrono::hours(24)) {
                   return value.refuse("at most 24h: removed cgroups must not pile up");
                 }
                 options.retain_removed = *retain;
                 return Ok{};
               }},
          },
      .make = [](const SourceContext& context, const ReclaimStallOptions& options) {
        return make_reclaim_stall_source(context.paths, options);
      },
  });
}

}  // namespace memdiag
