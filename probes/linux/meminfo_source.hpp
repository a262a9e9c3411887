#pragma once

#include <string>
#include <vector>

#include "probes/core/schema_cache.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"
#include "probes/linux/meminfo_parser.hpp"

namespace memdiag {

// Every field of <procfs>/meminfo, kB values in bytes.
class MeminfoSource final : public Source {
 public:
  explicit MeminfoSource(const std::string& procfs_root);
  std::string_view name() const override { return "meminfo"; }
  Status probe() override;
  Status sample(Snapshot& out) override;

 private:
  KernelFile file_;
  std::vector<MeminfoEntry> entries_;  // reused between samples
  SchemaCache schema_;
};

}  // namespace memdiag
