// SPDX-License-Identifier: Apache-2.0
// native_socket.hpp on Windows: sockets are SOCKET handles from Winsock, errors come from
// WSAGetLastError, and the process holds as many as memory allows (no descriptor limit).
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include "daemon/http/native_socket.hpp"

namespace memdiag::http {

void close_socket(NativeSocket socket) { ::closesocket(static_cast<SOCKET>(socket)); }

bool start_socket_layer() {
  static int started = [] {
    WSADATA data{};
    return ::WSAStartup(MAKEWORD(2, 2), &data);
  }();
  if (started != 0) ::WSASetLastError(started);
  return started == 0;
}

std::string last_socket_error() {
  const int code = ::WSAGetLastError();
  char text[256] = {};
  const DWORD n = ::FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                                   static_cast<DWORD>(code), 0, text, sizeof text, nullptr);
  std::string message(text, n);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == '.')) {
    message.pop_back();
  }
  if (message.empty()) message = "Winsock error";
  return message + " (" + std::to_string(code) + ")";
}

bool last_socket_call_would_block() {
  const int code = ::WSAGetLastError();
  return code == WSAEWOULDBLOCK || code == WSAEINTR;
}

bool last_socket_call_out_of_resources() {
  const int code = ::WSAGetLastError();
  return code == WSAEMFILE || code == WSAENOBUFS;
}

UniqueSocket open_stream_socket(int family, int protocol) {
  // WSA_FLAG_NO_HANDLE_INHERIT: the socket is not inherited by processes the daemon starts.
  UniqueSocket socket(::WSASocketW(family, SOCK_STREAM, protocol, nullptr, 0, WSA_FLAG_NO_HANDLE_INHERIT));
  if (!socket) return socket;
  u_long nonblocking = 1;
  if (::ioctlsocket(static_cast<SOCKET>(socket.get()), FIONBIO, &nonblocking) != 0) return UniqueSocket();
  return socket;
}

UniqueSocket accept_connection(NativeSocket listener) {
  for (;;) {
    // Accepted sockets inherit the listener's non-blocking mode.
    const SOCKET s = ::accept(static_cast<SOCKET>(listener), nullptr, nullptr);
    if (s == INVALID_SOCKET && ::WSAGetLastError() == WSAECONNRESET) continue;
    return UniqueSocket(static_cast<NativeSocket>(s));
  }
}

void allow_quick_rebind(NativeSocket socket) {
  const BOOL on = TRUE;
  ::setsockopt(static_cast<SOCKET>(socket), SOL_SOCKET, SO_EXCLUSIVEADDRUSE, reinterpret_cast<const char*>(&on),
               sizeof on);
}

void tune_connection(NativeSocket socket, int send_buffer_bytes) {
  const BOOL on = TRUE;
  ::setsockopt(static_cast<SOCKET>(socket), IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&on), sizeof on);
  ::setsockopt(static_cast<SOCKET>(socket), SOL_SOCKET, SO_SNDBUF, reinterpret_cast<const char*>(&send_buffer_bytes),
               sizeof send_buffer_bytes);
}

std::optional<std::size_t> socket_limit() { return std::nullopt; }

}  // namespace memdiag::http
