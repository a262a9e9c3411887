// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/pressure_source.hpp"

#include "probes/linux/node/pressure_parser.hpp"

namespace memdiag {

PressureSource::PressureSource(const std::string& procfs_root)
    : directory_(procfs_root + "/pressure"),
      files_{KernelFile(directory_ + "/memory", KernelFile::Reads::kOneRecord),
             KernelFile(directory_ + "/io", KernelFile::Reads::kOneRecord),
             KernelFile(directory_ + "/cpu", KernelFile::Reads::kOneRecord)} {}

Status PressureSource::probe() {
  for (auto& f : files_) {
    if (!f.exists()) continue;
    // CONFIG_PSI with CONFIG_PSI_DEFAULT_DISABLED (or psi=0) keeps the files but fails reads.
    if (auto text = f.read(); !text) {
      return make_error("PSI is compiled in but disabled (boot with psi=1): " + text.error().message);
    }
    return Ok{};
  }
  return make_error("PSI not available: " + directory_ +
                    " has no memory/io/cpu files (kernel without CONFIG_PSI, before 4.20, or psi=0)");
}

Status PressureSource::sample(Snapshot& out) {
  PressureSection section;
  bool any = false;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    auto text = files_[i].read();
    if (!text) {
      if (!files_[i].exists()) continue;  // this resource is not tracked by this kernel
      return text.error();                // EOPNOTSUPP when PSI is compiled in but disabled
    }
    auto parsed = parse_pressure(*text);
    if (!parsed) return make_error(files_[i].path() + ": " + parsed.error().message);
    section.resources[i] = *parsed;
    any = true;
  }
  if (!any) return make_error("PSI not available: no files under " + directory_);
  out.pressure = section;
  return Ok{};
}

}  // namespace memdiag
