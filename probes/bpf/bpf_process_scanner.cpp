// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/bpf_process_scanner.hpp"

#include "probes/bpf/bpf_factories.hpp"

#include <chrono>

namespace memdiag {

Expected<std::unique_ptr<ProcessScanner>> BpfProcessScanner::open(const std::string& btf_path,
                                                                   std::optional<MemoryHierarchy> hierarchy) {
  auto iterator = TaskMapsIterator::open(btf_path);
  if (!iterator) return iterator.error();
  return std::unique_ptr<ProcessScanner>(new BpfProcessScanner(std::move(iterator).value(), std::move(hierarchy)));
}

Status BpfProcessScanner::scan(std::vector<ProcessMaps>& out) {
  auto scanned = iterator_->scan(out);
  if (!scanned) return scanned;
  if (hierarchy_) {
    ids_.update(hierarchy_->root, std::chrono::steady_clock::now());
    // A cgroup with processes cannot be removed, so a removed one names nobody in this scan.
    ids_.forget_removed_unless([](std::uint64_t) { return false; });
  }
  return Ok{};
}

const std::string* BpfProcessScanner::cgroup_path(std::uint64_t cgroup_key) const {
  const CgroupIdMap::Entry* entry = ids_.find(cgroup_key);
  return entry == nullptr ? nullptr : &entry->path;
}

BpfScannerOpener task_iterator_opener(const std::string& btf_path) {
  return [btf_path](const std::optional<MemoryHierarchy>& hierarchy) { return BpfProcessScanner::open(btf_path, hierarchy); };
}

}  // namespace memdiag
