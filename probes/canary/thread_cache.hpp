// SPDX-License-Identifier: Apache-2.0
// Thread caches: per thread and per allocator instance, a free list per size class, so the
// common allocation and deallocation take no lock and touch no shared line.
//
// Several allocator instances may live in one process, so a thread finds its cache for an
// instance in a small thread_local table keyed by the instance's id (ids are never reused, so a
// destroyed instance's slot simply never matches again). The instance's inline fast path looks at
// slot 0 only; the slow path finds the right slot and moves it to the front. The table is
// constant-initialized plain data, so reading it is one %fs-relative load, no TLS wrapper call.
//
// When a thread exits, its caches go back to their instances (if still alive), through a process
// wide registry of instances. The same happens to a cache pushed out of a full table.
#pragma once

#include <atomic>
#include <cstdint>

#include "probes/canary/size_classes.hpp"

namespace memdiag::alloc::detail {

struct ThreadFreeList {
  void* head = nullptr;
  // Written by the owning thread only (a load and a store, no read-modify-write); atomic so that
  // stats() may read it from another thread.
  std::atomic<std::uint32_t> length{0};
  // Frees beyond this go to the slow path, which hands a batch back. Another thread at a ceiling
  // sets it to 0 (with ThreadCache::drain_requested), so the owner's next free drains the cache.
  std::atomic<std::uint32_t> max_length{0};
};

// Cache-line aligned: two threads' caches never share a line.
struct alignas(64) ThreadCache {
  std::uint64_t owner_id = 0;
  unsigned shard = 0;  // which central list shard this thread refills from
  // Set by another thread that met the process ceiling: the owner returns everything it caches
  // at its next slow path. (Taking the objects directly would race with the lock-free fast path.)
  std::atomic<bool> drain_requested{false};
  ThreadFreeList lists[kNumClasses];
};

struct ThreadCacheSlot {
  std::uint64_t owner_id;  // 0: empty
  ThreadCache* cache;
};

inline constexpr unsigned kThreadCacheSlots = 4;
inline thread_local constinit ThreadCacheSlot tls_cache_slots[kThreadCacheSlots] = {};

// What the registry calls back into: an allocator instance.
class ThreadCacheOwner {
 public:
  // Takes back a cache of a thread that exits or evicts it: flush its objects, forget, delete.
  virtual void retire_cache(ThreadCache* cache) noexcept = 0;

 protected:
  ~ThreadCacheOwner() = default;
};

// A new instance id (never 0, never reused), registered so exiting threads can find the owner.
std::uint64_t register_cache_owner(ThreadCacheOwner* owner);
// After this returns no thread will call retire_cache() on the owner again.
void unregister_cache_owner(std::uint64_t id) noexcept;

// The calling thread's cache for the instance, moved to slot 0; nullptr when it has none.
ThreadCache* find_thread_cache(std::uint64_t owner_id) noexcept;
// Puts a new cache in slot 0 of the calling thread's table, retiring the least recently used
// one when the table is full.
void install_thread_cache(ThreadCache* cache) noexcept;
// Removes the instance's cache from the calling thread's table (the cache itself is the caller's).
void forget_thread_cache(std::uint64_t owner_id) noexcept;

}  // namespace memdiag::alloc::detail
