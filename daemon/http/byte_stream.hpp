// SPDX-License-Identifier: Apache-2.0
// The byte stream under one HTTP connection: a plain non-blocking TCP socket (SocketStream) or
// TLS over one (TlsStream, Linux). The connection reads, writes and half-closes only through
// these calls, so the request parsing, the limits and the event loop are the same for both.
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
  // kWouldBlock only: the call waits for the other direction of the socket than its own. TLS
  // may have to send before it can read (a handshake message, an alert) or, in principle,
  // receive before it can write; a plain socket never does.
  bool other_direction = false;
};

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  virtual IoResult read(char* into, std::size_t size) = 0;
  // `first`, then `second`, in one call (one segment when they fit), as much as the stream
  // takes. After kWouldBlock the next call repeats the same bytes (TLS requires it; the
  // connection does it anyway, since it only moves on by what was written).
  virtual IoResult write(std::string_view first, std::string_view second = {}) = 0;
  // No more bytes from us (FIN after what was written); reading goes on.
  virtual void shutdown_write() = 0;
  virtual NativeSocket socket() const = 0;
  // Input already taken off the socket and held by the stream (TLS records decrypted or read
  // ahead): the socket will not become readable for it, so the loop must read it unasked.
  virtual bool has_buffered_input() const { return false; }
};

}  // namespace memdiag::http
