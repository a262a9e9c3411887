// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/server.hpp"
#include "daemon/stack_prefault.hpp"

#include <pthread.h>  // mingw-w64 posix threads have pthread_setname_np too
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/http/connection.hpp"
#include "daemon/http/poller.hpp"
#include "daemon/http/socket_stream.hpp"

namespace memdiag::http {
namespace {

using Clock = Connection::Clock;

// How long the listener is left alone when the process is out of descriptors and no
// connection can be dropped: accept() would fail at once again and the loop would spin.
constexpr std::chrono::milliseconds kAcceptPause{100};
// Accepts per wake-up, so a flood of connections cannot starve the ones already open.
constexpr int kAcceptBatch = 64;
// The longest the loop sleeps with a gate: it looks at the web config's files that often.
constexpr std::chrono::milliseconds kGateRefresh{1000};

}  // namespace

struct Server::Loop {
  struct Entry {
    std::unique_ptr<Connection> connection;
    Clock::time_point deadline;
    Interest interest = Interest::kReadable;
    bool responding = false;  // in Phase::kResponding at the last update
  };

  // Its wake() makes the loop look at `stopping` and, if not stopping, at the gate's verdicts.
  std::unique_ptr<Poller> poller;
  std::atomic<bool> stopping{false};
  UniqueSocket listener;
  Handlers handlers;
  ServerLimits limits;
  std::shared_ptr<AccessGate> gate;  // null: no web config, every request served
  AdmitConnection admit;             // empty: every connection accepted is served
  std::uint64_t next_serial = 0;
  std::unordered_map<NativeSocket, Entry> connections;
  std::set<std::pair<Clock::time_point, NativeSocket>> deadlines;  // earliest first
  // Connections whose stream holds input the socket will not announce (TLS): read unasked.
  std::set<NativeSocket> unannounced;
  Clock::time_point accept_paused_until{};
  bool accept_paused = false;
  bool said_cap = false;
  bool said_descriptors = false;
  bool said_held = false;

  void run();
  void accept_new(Clock::time_point now);
  void read_unannounced(Clock::time_point now);
  void take_verdicts(Clock::time_point now);
  bool add(UniqueSocket socket, Clock::time_point now);
  void dispatch(NativeSocket fd, const Readiness& ready, Clock::time_point now);
  void update(NativeSocket fd);
  void remove(NativeSocket fd);
  void keep_held_bytes_within_budget(NativeSocket fd);
  bool evict_one(NativeSocket spare_fd);
  void expire(Clock::time_point now);
  int wait_ms(Clock::time_point now) const;
  void watch_listener(bool on);
};

void Server::Loop::run() {
  pthread_setname_np(pthread_self(), "memdiag-http");
  Readiness ready[64];
  for (;;) {
    const PollResult polled = poller->wait(ready, wait_ms(Clock::now()));
    if (polled.failed) {
      spdlog::error("HTTP server stops: {}", polled.error);
      return;
    }
    if (polled.woken && stopping.load()) return;
    const Clock::time_point now = Clock::now();
    if (polled.woken) take_verdicts(now);
    for (std::size_t i = 0; i < polled.count; ++i) {
      if (ready[i].socket == listener.get()) {
        accept_new(now);
      } else {
        dispatch(ready[i].socket, ready[i], now);
      }
    }
    read_unannounced(now);
    expire(now);
    if (gate) gate->refresh();
    if (accept_paused && now >= accept_paused_until) watch_listener(true);
  }
}

void Server::Loop::accept_new(Clock::time_point now) {
  for (int i = 0; i < kAcceptBatch; ++i) {
    UniqueSocket accepted = accept_connection(listener.get());
    if (!accepted) {
      if (last_socket_call_out_of_resources()) {
        if (!said_descriptors) {
          spdlog::warn("HTTP: cannot accept a connection ({}) with {} open: dropping those that have waited longest",
                       last_socket_error(), connections.size());
          said_descriptors = true;
        }
        if (!evict_one(kNoSocket)) {
          watch_listener(false);
          accept_paused_until = now + kAcceptPause;
        }
      }
      return;  // none left to accept
    }
    const NativeSocket fd = accepted.get();
    if (admit && !admit(fd)) continue;  // closed here, before a byte of it is read
    if (!add(std::move(accepted), now)) continue;
    // A scraper's request is usually in the socket by the time it is accepted: answering it
    // now, before anything is evicted, keeps it from being the oldest wait under a flood of
    // new connections (connection_eviction.hpp).
    dispatch(fd, Readiness{fd, true, false, false}, now);
    if (connections.size() > limits.max_connections) {
      if (!said_cap) {
        spdlog::warn("HTTP: {} connections open, the cap: new ones push out those that have waited longest",
                     limits.max_connections);
        said_cap = true;
      }
      evict_one(fd);
    }
  }
}

// Each connection read once per turn, so one whose stream keeps producing input (a client
// pipelining over TLS) cannot keep the loop from the others.
void Server::Loop::read_unannounced(Clock::time_point now) {
  if (unannounced.empty()) return;
  const std::vector<NativeSocket> fds(unannounced.begin(), unannounced.end());
  for (const NativeSocket fd : fds) dispatch(fd, Readiness{fd, true, false, false}, now);
}

void Server::Loop::take_verdicts(Clock::time_point now) {
  if (!gate) return;
  for (const Verdict& verdict : gate->take_verdicts()) {
    auto it = connections.find(verdict.ticket.socket);
    // The connection may have gone meanwhile (dropped, timed out) and its descriptor reused.
    if (it == connections.end() || it->second.connection->ticket().serial != verdict.ticket.serial) continue;
    it->second.connection->on_verdict(verdict.granted, now, handlers);
    update(verdict.ticket.socket);
  }
}

// False when it cannot be watched (the socket is closed) or its stream cannot be made.
bool Server::Loop::add(UniqueSocket socket, Clock::time_point now) {
  // A response is complete when written: send it at once instead of waiting to fill a segment;
  // the kernel's copy of a response that is not taken is bounded per socket (see the limit).
  tune_connection(socket.get(), limits.send_buffer);
  const NativeSocket fd = socket.get();
  std::unique_ptr<ByteStream> stream =
      gate ? gate->open(std::move(socket)) : std::make_unique<SocketStream>(std::move(socket));
  if (!stream) return false;  // the gate could not set up TLS for it (it said why)
  Entry entry{std::make_unique<Connection>(std::move(stream), now, limits, gate.get(), ++next_serial), {},
              Interest::kReadable};
  entry.deadline = entry.connection->deadline();
  if (!poller->watch(fd, Interest::kReadable)) return false;  // entry closes the socket
  deadlines.emplace(entry.deadline, fd);
  connections.emplace(fd, std::move(entry));
  return true;
}

void Server::Loop::dispatch(NativeSocket fd, const Readiness& ready, Clock::time_point now) {
  auto it = connections.find(fd);
  if (it == connections.end()) return;  // dropped earlier in this batch
  it->second.connection->on_ready(ready, now, handlers);
  update(fd);
}

// After a connection has run: closes it when done, else follows what it now waits for.
void Server::Loop::update(NativeSocket fd) {
  Entry& entry = connections.at(fd);
  const Connection& c = *entry.connection;
  if (c.phase() == Connection::Phase::kDone) {
    remove(fd);
    return;
  }
  const Interest wanted = c.interest();
  const bool responding = c.phase() == Connection::Phase::kResponding;
  const bool started_waiting_to_send = responding && !entry.responding;
  entry.responding = responding;
  if (c.has_buffered_input()) {
    unannounced.insert(fd);
  } else {
    unannounced.erase(fd);
  }
  if (wanted != entry.interest) {
    poller->change(fd, wanted);
    entry.interest = wanted;
  }
  const Clock::time_point deadline = c.deadline();
  if (deadline != entry.deadline) {
    deadlines.erase({entry.deadline, fd});
    deadlines.emplace(deadline, fd);
    entry.deadline = deadline;
  }
  if (started_waiting_to_send) keep_held_bytes_within_budget(fd);
}

// Called when `fd` has begun to wait for its client to take a response: if the distinct
// exposition buffers held by such connections exceed max_held_bytes, drops the holders of
// buffers other than `fd`'s (the latest), longest stalled first, until they do not.
void Server::Loop::keep_held_bytes_within_budget(NativeSocket fd) {
  const std::string* latest = connections.at(fd).connection->held_body();
  if (latest == nullptr) return;
  std::unordered_map<const std::string*, std::size_t> holders;
  std::vector<std::pair<Clock::time_point, NativeSocket>> older;  // (stalled since, socket)
  std::size_t held = 0;
  for (const auto& [other, entry] : connections) {
    const std::string* body = entry.connection->held_body();
    if (body == nullptr) continue;
    if (holders[body]++ == 0) held += body->size();
    if (body != latest) older.emplace_back(entry.connection->eviction_candidate().since, other);
  }
  if (held <= limits.max_held_bytes) return;
  if (!said_held) {
    spdlog::warn("HTTP: responses not yet taken hold {} bytes of expositions, over {}: dropping those that hold "
                 "older snapshots",
                 held, limits.max_held_bytes);
    said_held = true;
  }
  std::sort(older.begin(), older.end());
  for (const auto& [since, other] : older) {
    if (held <= limits.max_held_bytes) break;
    const std::string* body = connections.at(other).connection->held_body();
    if (--holders[body] == 0) held -= body->size();
    remove(other);
  }
}

void Server::Loop::remove(NativeSocket fd) {
  auto it = connections.find(fd);
  if (it == connections.end()) return;
  deadlines.erase({it->second.deadline, fd});
  unannounced.erase(fd);
  poller->forget(fd);
  connections.erase(it);  // closes the socket
}

// Drops the connection choose_eviction picks, never `spare_fd`; false when none may go.
bool Server::Loop::evict_one(NativeSocket spare_fd) {
  std::vector<EvictionCandidate> candidates;
  std::vector<NativeSocket> fds;
  candidates.reserve(connections.size());
  fds.reserve(connections.size());
  for (const auto& [fd, entry] : connections) {
    if (fd == spare_fd) continue;
    candidates.push_back(entry.connection->eviction_candidate());
    fds.push_back(fd);
  }
  const std::size_t chosen = choose_eviction(candidates);
  if (chosen == kNoEviction) return false;
  remove(fds[chosen]);
  return true;
}

void Server::Loop::expire(Clock::time_point now) {
  while (!deadlines.empty() && deadlines.begin()->first <= now) {
    const NativeSocket fd = deadlines.begin()->second;
    connections.at(fd).connection->on_deadline();
    remove(fd);
  }
}

int Server::Loop::wait_ms(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  if (!unannounced.empty()) return 0;
  if (!deadlines.empty()) next = deadlines.begin()->first;
  if (gate) next = std::min(next, now + kGateRefresh);
  if (accept_paused) next = std::min(next, accept_paused_until);
  if (next == Clock::time_point::max()) return -1;
  if (next <= now) return 0;
  // Rounded up, so the loop does not wake a moment early and spin until the deadline.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

void Server::Loop::watch_listener(bool on) {
  poller->change(listener.get(), on ? Interest::kReadable : Interest::kNothing);
  accept_paused = !on;
}

Server::Server(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {
  thread_ = std::thread([this] {
    prefault_stack();
    loop_->run();
  });
}

Server::~Server() {
  loop_->stopping = true;
  if (!loop_->poller->wake()) spdlog::error("HTTP server: cannot wake its loop to stop: {}", last_socket_error());
  thread_.join();
  if (loop_->gate) loop_->gate->set_wake({});  // its password checks must not wake a poller that is gone
}

Expected<std::unique_ptr<Server>> Server::start(UniqueSocket listener, Handlers handlers, ServerLimits limits,
                                                std::shared_ptr<AccessGate> gate, AdmitConnection admit) {
  auto loop = std::make_unique<Loop>();
  auto poller = Poller::create();
  if (!poller) return poller.error();
  loop->poller = std::move(poller).value();
  loop->listener = std::move(listener);
  loop->handlers = std::move(handlers);
  loop->limits = limits;
  loop->gate = std::move(gate);
  loop->admit = std::move(admit);
  if (loop->gate) loop->gate->set_wake([poller = loop->poller.get()] { poller->wake(); });
  if (!loop->poller->watch(loop->listener.get(), Interest::kReadable)) {
    return make_error("cannot start the HTTP loop: cannot watch the listening socket: " + last_socket_error());
  }
  return std::unique_ptr<Server>(new Server(std::move(loop)));
}

}  // namespace memdiag::http
