// The node sources of a Linux host, registered explicitly by name. The names are also the
// keys of the `sources:` config section.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/source.hpp"

namespace memdiag {

struct KernelPaths {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
};

const std::vector<std::string_view>& linux_source_names();

// nullptr for an unknown name.
std::unique_ptr<Source> make_linux_source(std::string_view name, const KernelPaths& paths);

}  // namespace memdiag
