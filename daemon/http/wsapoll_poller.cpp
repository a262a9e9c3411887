// SPDX-License-Identifier: Apache-2.0
// Poller on Windows: WSAPoll over the watched sockets, rebuilt for each wait (a few hundred
// at most: the connection cap), and a UDP socket connected to itself for wake(). Windows has
// no eventfd, and WSAPoll only waits on sockets.
#include <winsock2.h>
#include <ws2tcpip.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "daemon/http/poller.hpp"

namespace memdiag::http {
namespace {

SHORT poll_events(Interest interest) {
  switch (interest) {
    case Interest::kReadable:
      return POLLRDNORM;
    case Interest::kWritable:
      return POLLWRNORM;
    case Interest::kNothing:
      break;
  }
  return 0;
}

Error cannot_start(const std::string& what) {
  return make_error("cannot start the HTTP loop: " + what + ": " + last_socket_error());
}

}  // namespace

struct Poller::State {
  std::unordered_map<NativeSocket, Interest> watched;
  std::vector<WSAPOLLFD> polled;  // reused between waits
  UniqueSocket wake;              // UDP, bound to 127.0.0.1 and connected to itself
};

Poller::Poller(std::unique_ptr<State> state) : state_(std::move(state)) {}
Poller::~Poller() = default;

Expected<std::unique_ptr<Poller>> Poller::create() {
  if (!start_socket_layer()) return cannot_start("WSAStartup");
  auto state = std::make_unique<State>();
  state->wake = UniqueSocket(::WSASocketW(AF_INET, SOCK_DGRAM, IPPROTO_UDP, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT));
  if (!state->wake) return cannot_start("socket");
  const SOCKET s = static_cast<SOCKET>(state->wake.get());
  sockaddr_in self{};
  self.sin_family = AF_INET;
  self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int length = sizeof self;
  u_long nonblocking = 1;
  if (::bind(s, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&self), &length) != 0 ||
      ::connect(s, reinterpret_cast<sockaddr*>(&self), sizeof self) != 0 || ::ioctlsocket(s, FIONBIO, &nonblocking) != 0) {
    return cannot_start("wake-up socket");
  }
  return std::unique_ptr<Poller>(new Poller(std::move(state)));
}

bool Poller::watch(NativeSocket socket, Interest interest) {
  if (socket == kNoSocket) return false;
  state_->watched[socket] = interest;
  return true;
}

void Poller::change(NativeSocket socket, Interest interest) {
  auto it = state_->watched.find(socket);
  if (it != state_->watched.end()) it->second = interest;
}

void Poller::forget(NativeSocket socket) { state_->watched.erase(socket); }

PollResult Poller::wait(std::span<Readiness> ready, int timeout_ms) {
  std::vector<WSAPOLLFD>& polled = state_->polled;
  polled.clear();
  polled.push_back({static_cast<SOCKET>(state_->wake.get()), POLLRDNORM, 0});
  for (const auto& [socket, interest] : state_->watched) {
    if (interest != Interest::kNothing) polled.push_back({static_cast<SOCKET>(socket), poll_events(interest), 0});
  }
  PollResult result;
  const int n = ::WSAPoll(polled.data(), static_cast<ULONG>(polled.size()), timeout_ms);
  if (n == SOCKET_ERROR) {
    if (::WSAGetLastError() == WSAEINTR) return result;
    result.failed = true;
    result.error = "WSAPoll: " + last_socket_error();
    return result;
  }
  if (polled[0].revents != 0) {
    result.woken = true;
    char drained[64];
    while (::recv(polled[0].fd, drained, sizeof drained, 0) > 0) {
    }
  }
  for (std::size_t i = 1; i < polled.size() && result.count < ready.size(); ++i) {
    const SHORT got = polled[i].revents;
    if (got == 0) continue;
    ready[result.count++] = {static_cast<NativeSocket>(polled[i].fd), (got & POLLRDNORM) != 0, (got & POLLWRNORM) != 0,
                             (got & (POLLHUP | POLLERR | POLLNVAL)) != 0};
  }
  return result;
}

bool Poller::wake() {
  const char one = 1;
  // A full buffer means wake-ups are already waiting to be read: the loop will wake.
  return ::send(static_cast<SOCKET>(state_->wake.get()), &one, 1, 0) == 1 || ::WSAGetLastError() == WSAEWOULDBLOCK;
}

}  // namespace memdiag::http
