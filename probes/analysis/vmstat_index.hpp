// SPDX-License-Identifier: Apache-2.0
// The vmstat counters the stall model reads, found by position: a snapshot's vmstat table is
// ~180 name/value pairs, and looking each counter up by name in two snapshots every sample cost
// more than the sample itself. Positions are resolved once per schema (the kernel's field set
// stays the same until reboot, and snapshots share the schema object while it does).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "probes/core/snapshot.hpp"

namespace memdiag::analysis {

class VmstatIndex {
 public:
  enum Field : std::size_t {
    kPgscanDirect,
    kPgscanKswapd,
    kCompactStall,
    kOomKill,
    kWorkingsetRefaultFile,  // since 5.9
    kWorkingsetRefault,      // before 5.9 (file pages only then)
    kActiveFile,             // nr_active_file
    kInactiveFile,           // nr_inactive_file
    kPgstealDirect,
    kPgstealKswapd,
    kFieldCount
  };

  // The counter in `snapshot`'s vmstat table; absent without the table or the field.
  std::optional<double> get(const Snapshot& snapshot, Field field);
  // The sum of every allocstall_* field (one per memory zone); absent when there is none.
  std::optional<double> allocstalls(const Snapshot& snapshot);

 private:
  static constexpr std::size_t kAbsent = ~std::size_t{0};
  struct Resolved {
    std::shared_ptr<const FieldSchema> schema;
    std::array<std::size_t, kFieldCount> at{};
    std::vector<std::size_t> allocstall;
  };
  const Resolved* resolve(const Snapshot& snapshot);

  // The window's two ends usually share one schema; two slots cover a change between them.
  std::array<Resolved, 2> cache_;
  std::size_t next_slot_ = 0;
};

}  // namespace memdiag::analysis
