// SPDX-License-Identifier: Apache-2.0
// The `btf_path` option of the sources that load eBPF programs (reclaim_stall, processes):
// where the kernel's BTF is, when not at /sys/kernel/btf/vmlinux.
#pragma once

#include <string>

#include "probes/core/option_value.hpp"

namespace memdiag {

inline OptionStatus read_btf_path(const OptionValue& value, std::string& out) {
  auto path = value.text();
  if (!path) return path.error();
  if (path->empty() || path->front() != '/') {
    return value.refuse("an absolute path to a BTF file, like /sys/kernel/btf/vmlinux, got '" + *path + "'");
  }
  out = std::move(*path);
  return Ok{};
}

}  // namespace memdiag
