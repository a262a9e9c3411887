// SPDX-License-Identifier: Apache-2.0
// SocketStream on Linux.
#include "daemon/http/socket_stream.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace memdiag::http {

IoResult SocketStream::read(char* into, std::size_t size) {
  for (;;) {
    const ssize_t n = ::recv(socket_.get(), into, size, 0);
    if (n > 0) return {IoStatus::kDone, static_cast<std::size_t>(n)};
    if (n == 0) return {IoStatus::kEnd, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWouldBlock, 0};
    return {IoStatus::kEnd, 0};  // reset, timed out: the connection is over either way
  }
}

IoResult SocketStream::write(std::string_view first, std::string_view second) {
  iovec parts[2] = {{const_cast<char*>(first.data()), first.size()}, {const_cast<char*>(second.data()), second.size()}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = second.empty() ? 1 : 2;
  for (;;) {
    // MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE for the daemon.
    const ssize_t n = ::sendmsg(socket_.get(), &message, MSG_NOSIGNAL);
    if (n >= 0) return {IoStatus::kDone, static_cast<std::size_t>(n)};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWouldBlock, 0};
    return {IoStatus::kEnd, 0};
  }
}

void SocketStream::shutdown_write() { ::shutdown(socket_.get(), SHUT_WR); }

}  // namespace memdiag::http
