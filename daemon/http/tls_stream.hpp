// SPDX-License-Identifier: Apache-2.0
// TLS over one accepted non-blocking socket, as a ByteStream: the connection reads and writes
// plaintext, and the handshake happens inside the first reads (SSL_read on a server-side
// session accepts first). So it is bounded like a request head is: the connection's head
// deadline runs from accepting it, bytes trickled in do not extend it, and until a head is
// complete it is the kind of connection dropped first at the cap.
//
// OpenSSL reads and writes the socket through a BIO of ours (send with MSG_NOSIGNAL: a client
// that resets while we write is an error, not a SIGPIPE for the daemon). A read may have to
// write first (a handshake message) and a write read first; kWouldBlock then says so with
// other_direction. What is left of a record already decrypted (a read takes at most a head's
// worth) is announced by has_buffered_input(), since the socket will not be readable for it.
// Linux only: the Windows build has no OpenSSL.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "daemon/http/byte_stream.hpp"
#include "daemon/http/tls_context.hpp"

namespace memdiag::http {

class TlsStream final : public ByteStream {
 public:
  // Null when OpenSSL cannot make a session (out of memory).
  static std::unique_ptr<TlsStream> accept(UniqueSocket socket, std::shared_ptr<const TlsContext> context);
  ~TlsStream() override;

  IoResult read(char* into, std::size_t size) override;
  IoResult write(std::string_view first, std::string_view second = {}) override;
  void shutdown_write() override;
  NativeSocket socket() const override { return socket_.get(); }
  bool has_buffered_input() const override;

  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

 private:
  TlsStream(UniqueSocket socket, std::shared_ptr<const TlsContext> context, SSL* ssl);
  // The result of a failed SSL call; `reading`: it was a read.
  IoResult failure(int returned, bool reading);

  UniqueSocket socket_;
  std::shared_ptr<const TlsContext> context_;  // the session's settings, kept while it lives
  SSL* ssl_;
  bool failed_ = false;  // a fatal error: no close_notify may be sent
  // A head and a small body go out as one record instead of two (coalesced here).
  std::string coalesced_;
};

}  // namespace memdiag::http
