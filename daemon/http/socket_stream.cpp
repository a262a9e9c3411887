#include "daemon/http/socket_stream.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace memdiag::http {

IoResult SocketStream::read(char* into, std::size_t size) {
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), into, size, 0);
    if (n > 0) return {IoStatus::kDone, static_cast<std::size_t>(n)};
    if (n == 0) return {IoStatus::kEnd, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWouldBlock, 0};
    return {IoStatus::kEnd, 0};  // reset, timed out: the connection is over either way
  }
}

IoResult SocketStream::write(const char* from, std::size_t size) {
  for (;;) {
    // MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE for the daemon.
    const ssize_t n = ::send(fd_.get(), from, size, MSG_NOSIGNAL);
    if (n >= 0) return {IoStatus::kDone, static_cast<std::size_t>(n)};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::kWouldBlock, 0};
    return {IoStatus::kEnd, 0};
  }
}

void SocketStream::shutdown_write() { ::shutdown(fd_.get(), SHUT_WR); }

}  // namespace memdiag::http
