// SPDX-License-Identifier: Apache-2.0
// The HTTP server's limits, and why each has its value. Together they bound what a client
// can hold without sending a request: a descriptor and a small buffer, for at most
// header_timeout, and never a scraper's place.
#pragma once

#include <chrono>
#include <cstddef>

namespace memdiag::http {

struct ServerLimits {
  // From accepting a connection (or the first byte of a later request on it) to the end of
  // its request head. Prometheus sends its whole head in one packet right after connecting;
  // 10 s forgives a very slow network, and bytes trickled in do not extend it.
  std::chrono::milliseconds header_timeout{10'000};
  // A kept-alive connection may wait this long for its next request: longer than the usual
  // scrape intervals (15 s-1 m) so Prometheus reuses it, and it costs no thread meanwhile.
  std::chrono::milliseconds keep_alive_timeout{120'000};
  // A client must take some of its response within this of the last bytes it took; one that
  // stops reading is dropped. From progress, not in total: a 2.5 MB exposition over a slow
  // link that keeps reading is not cut off.
  std::chrono::milliseconds write_timeout{30'000};
  // After answering with "Connection: close" (or refusing), unread input is drained this
  // long before closing, so the kernel does not reset the connection under the answer.
  std::chrono::milliseconds linger{2'000};
  // A request head longer than this is refused with 431. Prometheus' is ~300 bytes.
  std::size_t max_head_bytes = 8192;
  // SO_SNDBUF of every connection, which the kernel doubles for its bookkeeping: 256 KiB of
  // socket memory at most per connection, 128 MiB for 512 that stop reading, where Linux's
  // autotuning would let each grow to tcp_wmem's 4 MiB (2 GiB). 128 KiB in flight keeps a
  // 2.5 MB exposition at ~13 MB/s over a 10 ms round trip (0.2 s), and at loopback speed on
  // the node itself.
  int send_buffer = 128 * 1024;
  // Bytes of exposition held for responses still being sent. One buffer per snapshot is shared
  // by all who asked while it was the latest, so this grows only with the number of snapshots
  // some slow reader still holds; over it, holders of older snapshots are dropped (the longest
  // stalled first) and those of the latest never: 64 MiB is 25 snapshots of a 2.5 MB
  // exposition (max_cgroups 500).
  std::size_t max_held_bytes = std::size_t{64} << 20;
  // Connections held at once. At the cap a new connection is let in and an old one that has
  // not completed a request dropped (connection_eviction.hpp), so a scraper always gets in.
  std::size_t max_connections = 512;
};

// The cap the descriptor limit allows: max_connections at most a quarter of RLIMIT_NOFILE's
// soft limit (the cgroup source may hold up to half of it open; eBPF maps, eventfds and the
// canary need some), and at least 16.
std::size_t connection_cap(std::size_t wanted, unsigned long long descriptor_limit);

}  // namespace memdiag::http
