// SPDX-License-Identifier: Apache-2.0
#include "probes/core/snapshot_store.hpp"

#include <algorithm>

namespace memdiag {

SnapshotStore::SnapshotStore(std::size_t ring_capacity) : capacity_(std::max<std::size_t>(1, ring_capacity)) {}

void SnapshotStore::publish(SnapshotPtr snapshot) {
  SnapshotPtr evicted;  // released outside the lock: freeing a snapshot is not free
  {
    std::lock_guard lock(mutex_);
    ring_.push_back(std::move(snapshot));
    if (ring_.size() > capacity_) {
      evicted = std::move(ring_.front());
      ring_.pop_front();
    }
  }
}

SnapshotPtr SnapshotStore::latest() const {
  std::lock_guard lock(mutex_);
  return ring_.empty() ? nullptr : ring_.back();
}

std::vector<SnapshotPtr> SnapshotStore::recent() const {
  std::lock_guard lock(mutex_);
  return {ring_.begin(), ring_.end()};
}

void SnapshotStore::set_ring_capacity(std::size_t capacity) {
  std::deque<SnapshotPtr> evicted;
  std::lock_guard lock(mutex_);
  capacity_ = std::max<std::size_t>(1, capacity);
  while (ring_.size() > capacity_) {
    evicted.push_back(std::move(ring_.front()));
    ring_.pop_front();
  }
}

std::size_t SnapshotStore::ring_capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

std::size_t SnapshotStore::ring_size() const {
  std::lock_guard lock(mutex_);
  return ring_.size();
}

}  // namespace memdiag
