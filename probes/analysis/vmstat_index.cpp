// SPDX-License-Identifier: Apache-2.0
#include "probes/analysis/vmstat_index.hpp"

#include <string_view>

namespace memdiag::analysis {

namespace {

constexpr std::array<std::string_view, VmstatIndex::kFieldCount> kNames = {
    "pgscan_direct", "pgscan_kswapd", "compact_stall", "oom_kill", "workingset_refault_file", "workingset_refault",
    "nr_active_file", "nr_inactive_file", "pgsteal_direct", "pgsteal_kswapd"};
constexpr std::string_view kAllocstallPrefix = "allocstall_";

}  // namespace

const VmstatIndex::Resolved* VmstatIndex::resolve(const Snapshot& snapshot) {
  if (!snapshot.vmstat || !snapshot.vmstat->schema) return nullptr;
  const auto& schema = snapshot.vmstat->schema;
  for (const Resolved& r : cache_) {
    if (r.schema == schema) return &r;
  }
  Resolved& r = cache_[next_slot_];
  next_slot_ = (next_slot_ + 1) % cache_.size();
  r.schema = schema;
  r.at.fill(kAbsent);
  r.allocstall.clear();
  for (std::size_t i = 0; i < schema->names.size(); ++i) {
    const std::string_view name = schema->names[i];
    for (std::size_t f = 0; f < kNames.size(); ++f) {
      if (name == kNames[f] && r.at[f] == kAbsent) r.at[f] = i;
    }
    if (name.substr(0, kAllocstallPrefix.size()) == kAllocstallPrefix) r.allocstall.push_back(i);
  }
  return &r;
}

std::optional<double> VmstatIndex::get(const Snapshot& snapshot, Field field) {
  const Resolved* r = resolve(snapshot);
  if (r == nullptr) return std::nullopt;
  const std::size_t at = r->at[field];
  if (at == kAbsent || at >= snapshot.vmstat->values.size()) return std::nullopt;
  return static_cast<double>(snapshot.vmstat->values[at]);
}

std::optional<double> VmstatIndex::allocstalls(const Snapshot& snapshot) {
  const Resolved* r = resolve(snapshot);
  if (r == nullptr || r->allocstall.empty()) return std::nullopt;
  double sum = 0;
  for (std::size_t at : r->allocstall) {
    if (at < snapshot.vmstat->values.size()) sum += static_cast<double>(snapshot.vmstat->values[at]);
  }
  return sum;
}

}  // namespace memdiag::analysis
