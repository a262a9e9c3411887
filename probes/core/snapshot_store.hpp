// SPDX-License-Identifier: Apache-2.0
// Where the sampler publishes snapshots and everyone else reads them. The latest snapshot is
// immutable and shared, so a scrape renders it without copying or touching the kernel; a ring
// of recent ones serves rates and diagnosis.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "probes/core/snapshot.hpp"

namespace memdiag {

using SnapshotPtr = std::shared_ptr<const Snapshot>;

class SnapshotStore {
 public:
  explicit SnapshotStore(std::size_t ring_capacity);

  void publish(SnapshotPtr snapshot);
  SnapshotPtr latest() const;

  // Oldest first.
  std::vector<SnapshotPtr> recent() const;

  // Shrinking drops the oldest snapshots.
  void set_ring_capacity(std::size_t capacity);
  std::size_t ring_capacity() const;
  std::size_t ring_size() const;

 private:
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::deque<SnapshotPtr> ring_;
};

}  // namespace memdiag
