#include "daemon/source_names.hpp"

#include "probes/linux/linux_sources.hpp"

namespace memdiag {

const std::vector<std::string_view>& source_names() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names = linux_source_names();
    names.push_back("reclaim_stall");
    names.push_back("processes");
    names.push_back("canary");
    return names;
  }();
  return kNames;
}

bool source_has_refresh_interval(std::string_view name) { return linux_source_has_refresh_interval(name); }

}  // namespace memdiag
