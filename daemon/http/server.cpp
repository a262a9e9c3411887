#include "daemon/http/server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/http/connection.hpp"

namespace memdiag::http {
namespace {

using Clock = Connection::Clock;

// How long the listener is left alone when the process is out of descriptors and no
// connection can be dropped: accept() would fail at once again and the loop would spin.
constexpr std::chrono::milliseconds kAcceptPause{100};
// Accepts per wake-up, so a flood of connections cannot starve the ones already open.
constexpr int kAcceptBatch = 64;

}  // namespace

struct Server::Loop {
  struct Entry {
    std::unique_ptr<Connection> connection;
    Clock::time_point deadline;
    std::uint32_t events = 0;
  };

  UniqueFd epoll;
  UniqueFd listener;
  UniqueFd wake;  // eventfd: written by the destructor to stop the loop
  Handlers handlers;
  ServerLimits limits;
  std::unordered_map<int, Entry> connections;
  std::set<std::pair<Clock::time_point, int>> deadlines;  // earliest first
  Clock::time_point accept_paused_until{};
  bool accept_paused = false;
  bool said_cap = false;
  bool said_descriptors = false;
  bool said_held = false;

  void run();
  void accept_new(Clock::time_point now);
  bool add(int fd, Clock::time_point now);
  void dispatch(int fd, std::uint32_t events, Clock::time_point now);
  void update(int fd);
  void remove(int fd);
  void keep_held_bytes_within_budget(int fd);
  bool evict_one(int spare_fd);
  void expire(Clock::time_point now);
  int wait_ms(Clock::time_point now) const;
  void watch_listener(bool on);
};

void Server::Loop::run() {
  pthread_setname_np(pthread_self(), "memdiag-http");
  epoll_event events[64];
  for (;;) {
    const int n = ::epoll_wait(epoll.get(), events, 64, wait_ms(Clock::now()));
    if (n < 0 && errno != EINTR) {
      spdlog::error("HTTP server stops: epoll_wait: {}", std::strerror(errno));
      return;
    }
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake.get()) return;
      if (fd == listener.get()) {
        accept_new(now);
      } else {
        dispatch(fd, events[i].events, now);
      }
    }
    expire(now);
    if (accept_paused && now >= accept_paused_until) watch_listener(true);
  }
}

void Server::Loop::accept_new(Clock::time_point now) {
  for (int i = 0; i < kAcceptBatch; ++i) {
    const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        if (!said_descriptors) {
          spdlog::warn("HTTP: cannot accept a connection ({}) with {} open: dropping those that have waited longest",
                       std::strerror(errno), connections.size());
          said_descriptors = true;
        }
        if (!evict_one(-1)) {
          watch_listener(false);
          accept_paused_until = now + kAcceptPause;
        }
      }
      return;  // EAGAIN: none left to accept
    }
    if (!add(fd, now)) continue;
    // A scraper's request is usually in the socket by the time it is accepted: answering it
    // now, before anything is evicted, keeps it from being the oldest wait under a flood of
    // new connections (connection_eviction.hpp).
    dispatch(fd, EPOLLIN, now);
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

// False when it cannot be watched (the socket is closed).
bool Server::Loop::add(int fd, Clock::time_point now) {
  // A response is complete when written: send it now instead of waiting to fill a segment.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // The kernel's copy of a response that is not taken is bounded per socket (see the limit).
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &limits.send_buffer, sizeof limits.send_buffer);
  Entry entry{std::make_unique<Connection>(SocketStream(UniqueFd(fd)), now, limits), {}, EPOLLIN};
  entry.deadline = entry.connection->deadline();
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return false;  // entry closes fd
  deadlines.emplace(entry.deadline, fd);
  connections.emplace(fd, std::move(entry));
  return true;
}

void Server::Loop::dispatch(int fd, std::uint32_t events, Clock::time_point now) {
  auto it = connections.find(fd);
  if (it == connections.end()) return;  // dropped earlier in this batch
  Connection& c = *it->second.connection;
  const bool broken = (events & (EPOLLHUP | EPOLLERR)) != 0;
  if (c.phase() == Connection::Phase::kResponding) {
    if ((events & EPOLLOUT) || broken) c.on_writable(now, handlers);
  } else if ((events & EPOLLIN) || broken) {
    c.on_readable(now, handlers);
  }
  update(fd);
}

// After a connection has run: closes it when done, else follows what it now waits for.
void Server::Loop::update(int fd) {
  Entry& entry = connections.at(fd);
  const Connection& c = *entry.connection;
  if (c.phase() == Connection::Phase::kDone) {
    remove(fd);
    return;
  }
  const std::uint32_t wanted = c.phase() == Connection::Phase::kResponding ? EPOLLOUT : EPOLLIN;
  const bool started_waiting_to_send = wanted == EPOLLOUT && entry.events != EPOLLOUT;
  if (wanted != entry.events) {
    epoll_event ev{};
    ev.events = wanted;
    ev.data.fd = fd;
    ::epoll_ctl(epoll.get(), EPOLL_CTL_MOD, fd, &ev);
    entry.events = wanted;
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
void Server::Loop::keep_held_bytes_within_budget(int fd) {
  const std::string* latest = connections.at(fd).connection->held_body();
  if (latest == nullptr) return;
  std::unordered_map<const std::string*, std::size_t> holders;
  std::vector<std::pair<Clock::time_point, int>> older;  // (stalled since, fd)
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

void Server::Loop::remove(int fd) {
  auto it = connections.find(fd);
  if (it == connections.end()) return;
  deadlines.erase({it->second.deadline, fd});
  ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
  connections.erase(it);  // closes the socket
}

// Drops the connection choose_eviction picks, never `spare_fd`; false when none may go.
bool Server::Loop::evict_one(int spare_fd) {
  std::vector<EvictionCandidate> candidates;
  std::vector<int> fds;
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
    const int fd = deadlines.begin()->second;
    connections.at(fd).connection->on_deadline();
    remove(fd);
  }
}

int Server::Loop::wait_ms(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  if (!deadlines.empty()) next = deadlines.begin()->first;
  if (accept_paused) next = std::min(next, accept_paused_until);
  if (next == Clock::time_point::max()) return -1;
  if (next <= now) return 0;
  // Rounded up, so the loop does not wake a moment early and spin until the deadline.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

void Server::Loop::watch_listener(bool on) {
  epoll_event ev{};
  ev.events = on ? static_cast<std::uint32_t>(EPOLLIN) : 0u;
  ev.data.fd = listener.get();
  ::epoll_ctl(epoll.get(), EPOLL_CTL_MOD, listener.get(), &ev);
  accept_paused = !on;
}

Server::Server(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {
  thread_ = std::thread([this] { loop_->run(); });
}

Server::~Server() {
  const std::uint64_t one = 1;
  if (::write(loop_->wake.get(), &one, sizeof one) < 0) {
    spdlog::error("HTTP server: cannot wake its loop to stop: {}", std::strerror(errno));
  }
  thread_.join();
}

Expected<std::unique_ptr<Server>> Server::start(UniqueFd listener, Handlers handlers, ServerLimits limits) {
  auto loop = std::make_unique<Loop>();
  loop->epoll = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  loop->wake = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!loop->epoll || !loop->wake) return make_error(std::string("cannot start the HTTP loop: ") + std::strerror(errno));
  loop->listener = std::move(listener);
  loop->handlers = std::move(handlers);
  loop->limits = limits;
  for (int fd : {loop->listener.get(), loop->wake.get()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(loop->epoll.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return make_error(std::string("cannot start the HTTP loop: ") + std::strerror(errno));
    }
  }
  return std::unique_ptr<Server>(new Server(std::move(loop)));
}

}  // namespace memdiag::http
