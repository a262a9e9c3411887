// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/tls_stream.hpp"

#include <openssl/err.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdint>

namespace memdiag::http {
namespace {

// A head and body up to this size leave in one record (TLS's largest is 16 KiB).
constexpr std::size_t kCoalesceBytes = 16 * 1024;

int socket_of(BIO* bio) { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio))); }

int bio_write(BIO* bio, const char* data, std::size_t size, std::size_t* written) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = ::send(socket_of(bio), data, size, MSG_NOSIGNAL);
    if (n >= 0) {
      *written = static_cast<std::size_t>(n);
      return 1;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
    return 0;
  }
}

int bio_read(BIO* bio, char* into, std::size_t size, std::size_t* read) {
  BIO_clear_retry_flags(bio);
  for (;;) {
    const ssize_t n = ::recv(socket_of(bio), into, size, 0);
    if (n > 0) {
      *read = static_cast<std::size_t>(n);
      return 1;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(bio);
    return 0;  // end of stream or an error: OpenSSL fails the session
  }
}

long bio_control(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "memdiag socket");
    BIO_meth_set_write_ex(m, bio_write);
    BIO_meth_set_read_ex(m, bio_read);
    BIO_meth_set_ctrl(m, bio_control);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

}  // namespace

std::unique_ptr<TlsStream> TlsStream::accept(UniqueSocket socket, std::shared_ptr<const TlsContext> context) {
  SSL* ssl = SSL_new(context->native());
  BIO* bio = ssl == nullptr ? nullptr : BIO_new(socket_method());
  if (bio == nullptr) {
    SSL_free(ssl);
    ERR_clear_error();
    return nullptr;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(socket.get())));
  SSL_set_bio(ssl, bio, bio);  // the session owns it
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsStream>(new TlsStream(std::move(socket), std::move(context), ssl));
}

TlsStream::TlsStream(UniqueSocket socket, std::shared_ptr<const TlsContext> context, SSL* ssl)
    : socket_(std::move(socket)), context_(std::move(context)), ssl_(ssl) {}

TlsStream::~TlsStream() { SSL_free(ssl_); }

IoResult TlsStream::failure(int returned, bool reading) {
  const int error = SSL_get_error(ssl_, returned);
  switch (error) {
    case SSL_ERROR_WANT_READ:
      return {IoStatus::kWouldBlock, 0, !reading};
    case SSL_ERROR_WANT_WRITE:
      return {IoStatus::kWouldBlock, 0, reading};
    case SSL_ERROR_ZERO_RETURN:  // close_notify: the client is done
      break;
    default:
      // A failed handshake (plain HTTP, an unknown CA, no client certificate, an old protocol)
      // or a broken session. Debug only: any client on the network can cause these at will.
      failed_ = true;
      if (SSL_is_init_finished(ssl_) == 0 && spdlog::should_log(spdlog::level::debug)) {
        char reason[256] = "the client went away";
        if (const unsigned long code = ERR_peek_error()) ERR_error_string_n(code, reason, sizeof reason);
        spdlog::debug("HTTP: TLS handshake failed: {}", reason);
      }
      break;
  }
  ERR_clear_error();  // the loop thread's queue, shared by every connection
  return {IoStatus::kEnd, 0};
}

IoResult TlsStream::read(char* into, std::size_t size) {
  std::size_t n = 0;
  const int rc = SSL_read_ex(ssl_, into, size, &n);
  if (rc == 1) return {IoStatus::kDone, n};
  return failure(rc, true);
}

IoResult TlsStream::write(std::string_view first, std::string_view second) {
  // A retry after kWouldBlock comes with the same bytes, so the coalesced buffer is made the
  // same again and OpenSSL (told the buffer may move) takes it as the same write.
  if (!second.empty() && first.size() + second.size() <= kCoalesceBytes) {
    coalesced_.assign(first);
    coalesced_.append(second);
    first = coalesced_;
    second = {};
  }
  std::size_t total = 0;
  for (const std::string_view part : {first, second}) {
    if (part.empty()) continue;
    std::size_t n = 0;
    const int rc = SSL_write_ex(ssl_, part.data(), part.size(), &n);
    if (rc != 1) return total > 0 ? IoResult{IoStatus::kDone, total} : failure(rc, false);
    total += n;
    if (n < part.size()) break;  // the socket took part of it: the connection comes back for the rest
  }
  coalesced_ = std::string();  // not kept for the idle time of a kept-alive connection
  return {IoStatus::kDone, total};
}

void TlsStream::shutdown_write() {
  // close_notify, best effort (the response's length already tells the client where it ends),
  // then FIN; reading goes on until the client closes.
  if (!failed_ && SSL_is_init_finished(ssl_) == 1) SSL_shutdown(ssl_);
  ERR_clear_error();
  ::shutdown(socket_.get(), SHUT_WR);
}

// Decrypted bytes of a record read only in part (the connection reads at most a head's worth at
// a time). Not SSL_has_pending: it also counts a record that has only partly arrived, which
// cannot be read until the rest does, and the loop would spin on it. Without read-ahead (off
// by default) OpenSSL takes no more than the current record off the socket, so later records
// make the socket readable as usual.
bool TlsStream::has_buffered_input() const { return !failed_ && SSL_pending(ssl_) > 0; }

}  // namespace memdiag::http
