// SPDX-License-Identifier: Apache-2.0
// Every source of this build, in the order they sample and render: one registration line per
// source in the platform's catalog file (linux_catalog.cpp; windows/ brings its own). The daemon
// knows sources only through this list.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "probes/core/source_registration.hpp"

namespace memdiag {

const std::vector<SourceRegistration>& source_catalog();

// nullptr for a name no source of this build has.
const SourceRegistration* find_source(std::string_view name);

// A source by name with its default options, or with the given ones (which must be the
// options type its registration declares); nullptr for an unknown name. For tests, benchmarks
// and tools that build one source on its own.
std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths);
template <class Options>
std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths, const Options& options) {
  const SourceRegistration* r = find_source(name);
  return r == nullptr ? nullptr : r->make(SourceContext{paths}, std::any(options));
}

}  // namespace memdiag
