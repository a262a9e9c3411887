// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <string>

#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {

// Node PSI from <procfs>/pressure/{memory,io,cpu}. A kernel without PSI (before 4.20, or
// CONFIG_PSI off, or psi=0 on the command line) makes this source down with that reason;
// a single missing resource file is simply absent from the section.
class PressureSource final : public Source {
 public:
  explicit PressureSource(const std::string& procfs_root);
  std::string_view name() const override { return "pressure"; }
  Status probe() override;
  Status sample(Snapshot& out) override;

 private:
  std::string directory_;
  std::array<KernelFile, 3> files_;  // indexed by PsiResourceKind
};

}  // namespace memdiag
