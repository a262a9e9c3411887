// SPDX-License-Identifier: Apache-2.0
#include "probes/canary/thread_cache.hpp"

#include <mutex>
#include <unordered_map>
#include <utility>

namespace memdiag::alloc::detail {
namespace {

struct OwnerRegistry {
  std::mutex mu;
  std::unordered_map<std::uint64_t, ThreadCacheOwner*> owners;
  std::uint64_t next_id = 1;
};

// Never destroyed: threads may exit (and retire their caches) during static destruction.
OwnerRegistry& registry() {
  static OwnerRegistry* r = new OwnerRegistry;
  return *r;
}

void retire(ThreadCacheSlot& slot) noexcept {
  if (slot.owner_id == 0) return;
  OwnerRegistry& r = registry();
  {
    std::lock_guard lock(r.mu);
    // Holding the registry lock keeps the owner alive while it takes the cache back.
    auto it = r.owners.find(slot.owner_id);
    if (it != r.owners.end()) it->second->retire_cache(slot.cache);
  }
  slot = ThreadCacheSlot{0, nullptr};
}

// Registered the first time a thread gets a cache; its destructor runs at thread exit.
struct ThreadExitHook {
  bool armed = false;
  ~ThreadExitHook() {
    for (ThreadCacheSlot& slot : tls_cache_slots) retire(slot);
  }
};
thread_local ThreadExitHook thread_exit_hook;

}  // namespace

std::uint64_t register_cache_owner(ThreadCacheOwner* owner) {
  OwnerRegistry& r = registry();
  std::lock_guard lock(r.mu);
  const std::uint64_t id = r.next_id++;
  r.owners.emplace(id, owner);
  return id;
}

void unregister_cache_owner(std::uint64_t id) noexcept {
  OwnerRegistry& r = registry();
  std::lock_guard lock(r.mu);
  r.owners.erase(id);
}

ThreadCache* find_thread_cache(std::uint64_t owner_id) noexcept {
  for (unsigned i = 0; i < kThreadCacheSlots; ++i) {
    if (tls_cache_slots[i].owner_id == owner_id) {
      ThreadCacheSlot found = tls_cache_slots[i];
      for (unsigned j = i; j > 0; --j) tls_cache_slots[j] = tls_cache_slots[j - 1];
      tls_cache_slots[0] = found;
      return found.cache;
    }
  }
  return nullptr;
}

void install_thread_cache(ThreadCache* cache) noexcept {
  thread_exit_hook.armed = true;  // odr-use: constructs the hook, so its destructor will run
  retire(tls_cache_slots[kThreadCacheSlots - 1]);
  for (unsigned j = kThreadCacheSlots - 1; j > 0; --j) tls_cache_slots[j] = tls_cache_slots[j - 1];
  tls_cache_slots[0] = ThreadCacheSlot{cache->owner_id, cache};
}

void forget_thread_cache(std::uint64_t owner_id) noexcept {
  for (ThreadCacheSlot& slot : tls_cache_slots) {
    if (slot.owner_id == owner_id) slot = ThreadCacheSlot{0, nullptr};
  }
}

}  // namespace memdiag::alloc::detail
