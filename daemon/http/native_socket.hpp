// SPDX-License-Identifier: Apache-2.0
// A socket as the OS names it, and the few socket calls whose spelling differs between Linux
// and Windows, so that the listener, the event loop and the connections are written once.
// On Linux a socket is a descriptor (UniqueFd closes it); on Windows it is a SOCKET handle,
// closed with closesocket, whose errors come from WSAGetLastError instead of errno.
// Implemented by socket_posix.cpp or socket_win32.cpp, whichever the build is for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#ifndef _WIN32
#include "probes/linux/unique_fd.hpp"
#endif

namespace memdiag::http {

#ifdef _WIN32
using NativeSocket = std::uintptr_t;                         // SOCKET
inline constexpr NativeSocket kNoSocket = ~NativeSocket{0};  // INVALID_SOCKET

void close_socket(NativeSocket socket);

class UniqueSocket {
 public:
  UniqueSocket() = default;
  explicit UniqueSocket(NativeSocket socket) : socket_(socket) {}
  UniqueSocket(UniqueSocket&& other) noexcept : socket_(std::exchange(other.socket_, kNoSocket)) {}
  UniqueSocket& operator=(UniqueSocket&& other) noexcept {
    if (this != &other) reset(std::exchange(other.socket_, kNoSocket));
    return *this;
  }
  UniqueSocket(const UniqueSocket&) = delete;
  UniqueSocket& operator=(const UniqueSocket&) = delete;
  ~UniqueSocket() { reset(); }

  NativeSocket get() const { return socket_; }
  explicit operator bool() const { return socket_ != kNoSocket; }
  void reset(NativeSocket socket = kNoSocket) {
    if (socket_ != kNoSocket) close_socket(socket_);
    socket_ = socket;
  }

 private:
  NativeSocket socket_ = kNoSocket;
};
#else
using NativeSocket = int;
inline constexpr NativeSocket kNoSocket = -1;
using UniqueSocket = UniqueFd;
#endif

// Starts the OS's socket layer (WSAStartup on Windows, once per process; nothing on Linux).
// False, with last_socket_error() saying why, when it cannot.
bool start_socket_layer();

// The last socket call's failure, as text ("Address already in use").
std::string last_socket_error();

// Whether the last socket call failed only because it would have had to wait.
bool last_socket_call_would_block();

// Whether the last socket call failed because the process (or system) is out of sockets or
// buffers: then waiting, or dropping a connection, is the answer, not giving up.
bool last_socket_call_out_of_resources();

// A new TCP socket of `family`, non-blocking and not inherited by child processes.
UniqueSocket open_stream_socket(int family, int protocol);

// Accepts a connection from `listener`, non-blocking like it; kNoSocket when none (or on
// failure: see the last_socket_call_* predicates).
UniqueSocket accept_connection(NativeSocket listener);

// A restarted daemon binds its port again at once, though old connections linger in
// TIME_WAIT, but never a port another process is listening on. Linux: SO_REUSEADDR (it still
// refuses a port with a listener). Windows: SO_EXCLUSIVEADDRUSE, so no other socket can take the
// port (its SO_REUSEADDR would let two listeners share it); Windows documents that such a port
// cannot be bound again while connections accepted on it are still open, so a quick restart
// there may wait for them (not verified on a real Windows host: docs/windows.md).
void allow_quick_rebind(NativeSocket socket);

// Small responses leave at once (TCP_NODELAY) and the kernel holds at most `bytes` of a
// response the client is not taking (SO_SNDBUF).
void tune_connection(NativeSocket socket, int send_buffer_bytes);

// How many sockets the process may hold where the OS bounds it (RLIMIT_NOFILE); nullopt where
// it does not (Windows).
std::optional<std::size_t> socket_limit();

}  // namespace memdiag::http
