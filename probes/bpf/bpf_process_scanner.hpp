// SPDX-License-Identifier: Apache-2.0
// The eBPF process scanner: TaskMapsIterator's records, with their memory cgroup ids
// named through CgroupIdMap (ids are the memory hierarchy's directory inode numbers).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "probes/bpf/task_maps_iterator.hpp"
#include "probes/core/process_record.hpp"
#include "probes/linux/cgroup/cgroup_hierarchy.hpp"
#include "probes/linux/cgroup/cgroup_id_map.hpp"

namespace memdiag {

class BpfProcessScanner final : public ProcessScanner {
 public:
  // Loads the iterator (tens of milliseconds). Without a hierarchy, cgroups stay unnamed.
  static Expected<std::unique_ptr<ProcessScanner>> open(const std::string& btf_path,
                                                        std::optional<MemoryHierarchy> hierarchy);

  std::string_view mode() const override { return "bpf_iter"; }
  Status scan(std::vector<ProcessMaps>& out) override;
  const ProcessScanProblems& problems() const override { return problems_; }
  const std::string* cgroup_path(std::uint64_t cgroup_key) const override;

 private:
  BpfProcessScanner(std::unique_ptr<TaskMapsIterator> iterator, std::optional<MemoryHierarchy> hierarchy)
      : iterator_(std::move(iterator)), hierarchy_(std::move(hierarchy)) {}

  std::unique_ptr<TaskMapsIterator> iterator_;
  std::optional<MemoryHierarchy> hierarchy_;
  CgroupIdMap ids_;
  ProcessScanProblems problems_;  // the iterator reads the kernel's lists: nothing vanishes
};

}  // namespace memdiag
