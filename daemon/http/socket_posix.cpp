// SPDX-License-Identifier: Apache-2.0
// native_socket.hpp on Linux: sockets are descriptors, errors are errno.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "daemon/http/native_socket.hpp"

namespace memdiag::http {

bool start_socket_layer() { return true; }

std::string last_socket_error() { return std::strerror(errno); }

bool last_socket_call_would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

bool last_socket_call_out_of_resources() {
  return errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM;
}

UniqueSocket open_stream_socket(int family, int protocol) {
  return UniqueSocket(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol));
}

UniqueSocket accept_connection(NativeSocket listener) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    // A connection reset before it was accepted is not the listener's failure: take the next.
    if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
    return UniqueSocket(fd);
  }
}

void allow_quick_rebind(NativeSocket socket) {
  const int one = 1;
  ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
}

void tune_connection(NativeSocket socket, int send_buffer_bytes) {
  const int one = 1;
  ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &send_buffer_bytes, sizeof send_buffer_bytes);
}

std::optional<std::size_t> socket_limit() {
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::size_t>(nofile.rlim_cur);
}

}  // namespace memdiag::http
