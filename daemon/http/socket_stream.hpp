// The byte stream under one HTTP connection: a non-blocking TCP socket (socket_stream_posix.cpp,
// socket_stream_win32.cpp). The connection reads,
// writes and half-closes only through these calls, so TLS (issue 16) can come in as another
// stream over the same socket without the parsing or the event loop changing.
#pragma once

#include <cstddef>
#include <string_view>

#include "daemon/http/native_socket.hpp"

namespace memdiag::http {

enum class IoStatus {
  kDone,        // `bytes` moved (at least one)
  kWouldBlock,  // nothing now; wait for readiness
  kEnd,         // the peer closed its side (read) or the connection is gone (write)
};

struct IoResult {
  IoStatus status = IoStatus::kDone;
  std::size_t bytes = 0;
};

class SocketStream {
 public:
  explicit SocketStream(UniqueSocket socket) : socket_(std::move(socket)) {}

  IoResult read(char* into, std::size_t size);
  // `first`, then `second`, in one call (one segment when they fit), as much as the socket takes.
  IoResult write(std::string_view first, std::string_view second = {});
  // No more bytes from us (FIN after what was written); reading goes on.
  void shutdown_write();
  NativeSocket socket() const { return socket_.get(); }

 private:
  UniqueSocket socket_;
};

}  // namespace memdiag::http
