#pragma once

#include <string>
#include <vector>

#include "probes/core/schema_cache.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/vmstat_parser.hpp"

namespace memdiag {

// Every field of <procfs>/vmstat: event counters and nr_* levels.
class VmstatSource final : public Source {
 public:
  explicit VmstatSource(const std::string& procfs_root);
  std::string_view name() const override { return "vmstat"; }
  Status probe() override;
  Status sample(Snapshot& out) override;

 private:
  KernelFile file_;
  std::vector<VmstatEntry> entries_;
  SchemaCache schema_;
};

}  // namespace memdiag
