// SPDX-License-Identifier: Apache-2.0
// Poller on Linux: one epoll set, and an eventfd in it for wake().
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "daemon/http/poller.hpp"

namespace memdiag::http {
namespace {

std::uint32_t epoll_events(Interest interest) {
  switch (interest) {
    case Interest::kReadable:
      return EPOLLIN;
    case Interest::kWritable:
      return EPOLLOUT;
    case Interest::kNothing:
      break;
  }
  return 0;
}

}  // namespace

struct Poller::State {
  UniqueFd epoll;
  UniqueFd wake;  // eventfd
};

Poller::Poller(std::unique_ptr<State> state) : state_(std::move(state)) {}
Poller::~Poller() = default;

Expected<std::unique_ptr<Poller>> Poller::create() {
  auto state = std::make_unique<State>();
  state->epoll = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  state->wake = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state->epoll || !state->wake) return make_error(std::string("cannot start the HTTP loop: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = state->wake.get();
  if (::epoll_ctl(state->epoll.get(), EPOLL_CTL_ADD, state->wake.get(), &ev) != 0) {
    return make_error(std::string("cannot start the HTTP loop: ") + std::strerror(errno));
  }
  return std::unique_ptr<Poller>(new Poller(std::move(state)));
}

bool Poller::watch(NativeSocket socket, Interest interest) {
  epoll_event ev{};
  ev.events = epoll_events(interest);
  ev.data.fd = socket;
  return ::epoll_ctl(state_->epoll.get(), EPOLL_CTL_ADD, socket, &ev) == 0;
}

void Poller::change(NativeSocket socket, Interest interest) {
  epoll_event ev{};
  ev.events = epoll_events(interest);
  ev.data.fd = socket;
  ::epoll_ctl(state_->epoll.get(), EPOLL_CTL_MOD, socket, &ev);
}

void Poller::forget(NativeSocket socket) { ::epoll_ctl(state_->epoll.get(), EPOLL_CTL_DEL, socket, nullptr); }

PollResult Poller::wait(std::span<Readiness> ready, int timeout_ms) {
  epoll_event events[64];
  const int capacity = static_cast<int>(std::min<std::size_t>(ready.size(), 64));
  PollResult result;
  const int n = ::epoll_wait(state_->epoll.get(), events, capacity, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return result;
    result.failed = true;
    result.error = std::string("epoll_wait: ") + std::strerror(errno);
    return result;
  }
  for (int i = 0; i < n; ++i) {
    if (events[i].data.fd == state_->wake.get()) {
      result.woken = true;
      std::uint64_t count = 0;  // reset it, or the level-triggered set reports it again at once
      [[maybe_unused]] const ssize_t n = ::read(state_->wake.get(), &count, sizeof count);
      continue;
    }
    ready[result.count++] = {events[i].data.fd, (events[i].events & EPOLLIN) != 0,
                             (events[i].events & EPOLLOUT) != 0, (events[i].events & (EPOLLHUP | EPOLLERR)) != 0};
  }
  return result;
}

bool Poller::wake() {
  const std::uint64_t one = 1;
  return ::write(state_->wake.get(), &one, sizeof one) == static_cast<ssize_t>(sizeof one);
}

}  // namespace memdiag::http
