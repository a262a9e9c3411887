// SPDX-License-Identifier: Apache-2.0
// The byte stream of a plain HTTP connection: a non-blocking TCP socket
// (socket_stream_posix.cpp, socket_stream_win32.cpp). TLS is another ByteStream over the same
// socket (tls_stream.hpp).
#pragma once

#include "daemon/http/byte_stream.hpp"
#include "daemon/http/native_socket.hpp"

namespace memdiag::http {

class SocketStream final : public ByteStream {
 public:
  explicit SocketStream(UniqueSocket socket) : socket_(std::move(socket)) {}

  IoResult read(char* into, std::size_t size) override;
  IoResult write(std::string_view first, std::string_view second = {}) override;
  void shutdown_write() override;
  NativeSocket socket() const override { return socket_.get(); }

 private:
  UniqueSocket socket_;
};

}  // namespace memdiag::http
