// SPDX-License-Identifier: Apache-2.0
// SocketStream on Windows: Winsock's recv and WSASend (two buffers in one call, like sendmsg).
// Windows has no SIGPIPE, so a peer that went away is just an error here too.
#include <winsock2.h>

#include <algorithm>

#include "daemon/http/socket_stream.hpp"

namespace memdiag::http {
namespace {

// recv and WSASend take at most an int's worth of bytes per call.
ULONG capped(std::size_t size) { return static_cast<ULONG>(std::min<std::size_t>(size, 1u << 30)); }

}  // namespace

IoResult SocketStream::read(char* into, std::size_t size) {
  const int n = ::recv(static_cast<SOCKET>(socket_.get()), into, static_cast<int>(capped(size)), 0);
  if (n > 0) return {IoStatus::kDone, static_cast<std::size_t>(n)};
  if (n == 0) return {IoStatus::kEnd, 0};
  if (last_socket_call_would_block()) return {IoStatus::kWouldBlock, 0};
  return {IoStatus::kEnd, 0};  // reset, timed out: the connection is over either way
}

IoResult SocketStream::write(std::string_view first, std::string_view second) {
  WSABUF parts[2] = {{capped(first.size()), const_cast<char*>(first.data())},
                     {capped(second.size()), const_cast<char*>(second.data())}};
  DWORD sent = 0;
  if (::WSASend(static_cast<SOCKET>(socket_.get()), parts, second.empty() ? 1 : 2, &sent, 0, nullptr, nullptr) == 0) {
    return {IoStatus::kDone, static_cast<std::size_t>(sent)};
  }
  if (last_socket_call_would_block()) return {IoStatus::kWouldBlock, 0};
  return {IoStatus::kEnd, 0};
}

void SocketStream::shutdown_write() { ::shutdown(static_cast<SOCKET>(socket_.get()), SD_SEND); }

}  // namespace memdiag::http
