// SPDX-License-Identifier: Apache-2.0
#include "probes/catalog/source_catalog.hpp"

namespace memdiag {

const SourceRegistration* find_source(std::string_view name) {
  for (const SourceRegistration& r : source_catalog()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths) {
  const SourceRegistration* r = find_source(name);
  return r == nullptr ? nullptr : r->make(SourceContext{paths}, r->defaults);
}

}  // namespace memdiag
