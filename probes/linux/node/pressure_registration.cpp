// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/pressure_registration.hpp"

#include "probes/linux/node/pressure_source.hpp"

namespace memdiag {

SourceRegistration pressure_registration() {
  return register_source(SourceSpec<NoOptions>{
      .name = "pressure",
      .platform = Platform::kLinux,
      .make = [](const SourceContext& context, const NoOptions&) -> std::unique_ptr<Source> {
        return std::make_unique<PressureSource>(context.paths.procfs);
      },
  });
}

}  // namespace memdiag
