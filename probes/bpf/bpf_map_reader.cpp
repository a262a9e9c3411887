// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/bpf_map_reader.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace memdiag {
namespace {

// Entries per batch at first. Ample for our maps' hash buckets; grows on ENOSPC (a bucket
// holding more entries than the batch has room for).
constexpr std::uint32_t kInitialBatch = 256;

// The kernel's internal "operation not supported" (not in <errno.h>), returned by map types
// without batch support on some kernels.
constexpr int kKernelEnotsupp = 524;

Error map_error(const char* map_name, const char* what, int err) {
  return make_error(std::string("BPF map ") + map_name + ": " + what + ": " + std::strerror(err));
}

Status walk_with_next_key(int map_fd, const char* map_name, std::size_t key_size, std::size_t value_size,
                          BpfMapScratch& scratch,
                          const std::function<void(const void*, const void*)>& visit) {
  scratch.keys.resize(2 * key_size);
  scratch.values.resize(value_size);
  unsigned char* prev = scratch.keys.data();
  unsigned char* next = prev + key_size;
  const void* cursor = nullptr;  // null asks for the first key
  while (true) {
    if (bpf_map_get_next_key(map_fd, cursor, next) != 0) {
      if (errno == ENOENT) return Ok{};
      return map_error(map_name, "get_next_key", errno);
    }
    if (bpf_map_lookup_elem(map_fd, next, scratch.values.data()) == 0) {
      visit(next, scratch.values.data());
    } else if (errno != ENOENT) {  // ENOENT: deleted between the two calls
      return map_error(map_name, "lookup", errno);
    }
    std::swap(prev, next);
    cursor = prev;
  }
}

}  // namespace

Status for_each_map_entry(int map_fd, const char* map_name, std::size_t key_size, std::size_t value_size,
                          BpfMapScratch& scratch,
                          const std::function<void(const void* key, const void* value)>& visit) {
  // The batch token is opaque; hash maps use a u32 bucket index, other maps a key.
  std::vector<unsigned char> token_in(std::max<std::size_t>(key_size, 8));
  std::vector<unsigned char> token_out(token_in.size());
  std::uint32_t capacity = std::max<std::uint32_t>(
      kInitialBatch, static_cast<std::uint32_t>(scratch.keys.size() / std::max<std::size_t>(key_size, 1)));
  bool first = true;
  while (true) {
    scratch.keys.resize(static_cast<std::size_t>(capacity) * key_size);
    scratch.values.resize(static_cast<std::size_t>(capacity) * value_size);
    std::uint32_t count = capacity;
    const int rc = bpf_map_lookup_batch(map_fd, first ? nullptr : token_in.data(), token_out.data(),
                                        scratch.keys.data(), scratch.values.data(), &count, nullptr);
    const int err = rc == 0 ? 0 : errno;
    if (rc != 0 && err == ENOSPC) {
      capacity *= 2;  // one bucket did not fit: retry the same position with more room
      if (capacity > (1u << 20)) return map_error(map_name, "lookup_batch", err);
      continue;
    }
    if (rc != 0 && err != ENOENT) {
      // EINVAL/ENOTSUPP: no batch operations for this map type on this kernel.
      if (first && (err == EINVAL || err == kKernelEnotsupp || err == EOPNOTSUPP)) {
        return walk_with_next_key(map_fd, map_name, key_size, value_size, scratch, visit);
      }
      return map_error(map_name, "lookup_batch", err);
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      visit(scratch.keys.data() + static_cast<std::size_t>(i) * key_size,
            scratch.values.data() + static_cast<std::size_t>(i) * value_size);
    }
    if (rc != 0) return Ok{};  // ENOENT: that was the last batch
    token_in.swap(token_out);
    first = false;
  }
}

Expected<std::uint64_t> sum_percpu_u64(int map_fd, const char* map_name, std::uint32_t index) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return map_error(map_name, "counting possible CPUs", -cpus);
  // The kernel copies one 8-byte-aligned slot per possible CPU.
  std::vector<std::uint64_t> per_cpu(static_cast<std::size_t>(cpus));
  if (bpf_map_lookup_elem(map_fd, &index, per_cpu.data()) != 0) return map_error(map_name, "lookup", errno);
  std::uint64_t sum = 0;
  for (std::uint64_t v : per_cpu) sum += v;
  return sum;
}

}  // namespace memdiag
