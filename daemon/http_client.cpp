// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_client.hpp"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "probes/linux/unique_fd.hpp"

namespace memdiag {

namespace {

using Clock = std::chrono::steady_clock;

struct Url {
  bool tls = false;
  std::string host;
  std::string port;
  std::string target;
};

Expected<Url> parse_url(std::string_view url) {
  Url out;
  if (url.substr(0, 7) == "http://") {
    url.remove_prefix(7);
  } else if (url.substr(0, 8) == "https://") {
    url.remove_prefix(8);
    out.tls = true;
  } else {
    return make_error("only http:// and https:// URLs are supported: " + std::string(url));
  }
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return make_error("unclosed [ in the URL's host");
    out.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') out.port = std::string(authority.substr(1));
  } else {
    const std::size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) out.port = std::string(authority.substr(colon + 1));
  }
  if (out.host.empty()) return make_error("no host in the URL");
  if (out.port.empty()) out.port = out.tls ? "443" : "80";
  return out;
}

// Waits for `events` on `fd` until `deadline`; false when it passed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

std::string openssl_error(const char* what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  return std::string(what) + (code != 0 ? std::string(": ") + text : std::string());
}

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// The client's TLS context: the pinned certificate as the only trust anchor, or the CA bundle,
// or the system's.
Expected<SslCtxPtr> client_context(const HttpClientOptions& options) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return make_error(openssl_error("TLS"));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!options.pinned_certificate.empty()) {
    std::FILE* file = std::fopen(options.pinned_certificate.c_str(), "r");
    if (file == nullptr) return make_error(options.pinned_certificate + ": " + std::strerror(errno));
    X509* certificate = PEM_read_X509(file, nullptr, nullptr, nullptr);
    std::fclose(file);
    if (certificate == nullptr) return make_error(openssl_error((options.pinned_certificate + ": no certificate").c_str()));
    X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
    const int added = X509_STORE_add_cert(store, certificate);
    X509_free(certificate);
    if (added != 1) return make_error(openssl_error("TLS: the pinned certificate"));
    // The certificate itself is the anchor, whoever issued it.
    X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx.get()), X509_V_FLAG_PARTIAL_CHAIN);
  } else if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), options.ca_file.c_str(), nullptr) != 1) {
      return make_error(openssl_error((options.ca_file + ": cannot load it as CA certificates").c_str()));
    }
  } else if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
    return make_error(openssl_error("TLS: the system's CA certificates"));
  }
  if (!options.client_cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), options.client_cert_file.c_str()) != 1) {
      return make_error(openssl_error((options.client_cert_file + ": cannot load it as a certificate").c_str()));
    }
    // OpenSSL checks here that the key is the certificate's ("key values mismatch").
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), options.client_key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      return make_error(openssl_error(
          (options.client_key_file + ": cannot use it as the private key of " + options.client_cert_file).c_str()));
    }
  }
  return ctx;
}

// One OpenSSL call on the non-blocking socket, repeated as it asks until it completes, the
// peer closes (0) or the deadline passes.
template <class Call>
Expected<int> tls_step(SSL* ssl, int fd, Clock::time_point deadline, const char* what, Call call) {
  for (;;) {
    ERR_clear_error();
    const int n = call();
    if (n > 0) return n;
    const int error = SSL_get_error(ssl, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      if (!wait_for(fd, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
        return make_error(std::string(what) + ": no progress within the timeout");
      }
      continue;
    }
    if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && n == 0)) return 0;
    if (error == SSL_ERROR_SSL && SSL_get_verify_result(ssl) != X509_V_OK) {
      return make_error(std::string(what) + ": the daemon's certificate is not trusted: " +
                        X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
    }
    return make_error(openssl_error(what));
  }
}

std::string base64(std::string_view text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

// A connected, non-blocking TCP socket to the URL's host and port (each address it resolves to
// tried in turn).
Expected<UniqueFd> connect_tcp(const Url& u, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found); rc != 0) {
    return make_error(u.host + ":" + u.port + ": " + ::gai_strerror(rc));
  }
  std::string last_error = "no address";
  UniqueFd socket_fd;
  for (addrinfo* a = found; a != nullptr && !socket_fd; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) continue;
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = std::strerror(errno);
      continue;
    }
    if (!wait_for(fd.get(), POLLOUT, deadline)) {
      last_error = "no connection within the timeout";
      continue;
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      last_error = std::strerror(error);
      continue;
    }
    socket_fd = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!socket_fd) return make_error("cannot connect to " + u.host + ":" + u.port + ": " + last_error);
  return socket_fd;
}

// A connected, non-blocking stream socket to the Unix socket at `path`.
Expected<UniqueFd> connect_unix(const std::string& path, Clock::time_point deadline) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof address.sun_path) return make_error("not a Unix socket path: " + path);
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return make_error(std::string("socket: ") + std::strerror(errno));
  // A non-blocking connect to a Unix socket completes at once, or fails with EAGAIN while the
  // listener's backlog is full: that is tried again until the deadline.
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    if ((error != EAGAIN && error != EINTR) || Clock::now() >= deadline) {
      return make_error("cannot connect to unix:" + path + ": " +
                        (error == EAGAIN ? std::string("no connection within the timeout") : std::strerror(error)));
    }
    ::usleep(10'000);
  }
  return fd;
}

bool is_ip_address(const std::string& host) {
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

}  // namespace

Expected<HttpReply> http_get(const std::string& url, std::chrono::milliseconds timeout, const HttpClientOptions& options) {
  auto parsed = parse_url(url);
  if (!parsed) return parsed.error();
  const Url& u = *parsed;
  const auto deadline = Clock::now() + timeout;

  UniqueFd socket_fd;
  if (!options.unix_socket.empty()) {
    if (u.tls) return make_error("a Unix socket is plain HTTP: " + url);
    auto connected = connect_unix(options.unix_socket, deadline);
    if (!connected) return connected.error();
    socket_fd = std::move(connected).value();
  } else {
    auto connected = connect_tcp(u, deadline);
    if (!connected) return connected.error();
    socket_fd = std::move(connected).value();
  }

  SslCtxPtr ctx;
  SslPtr ssl;
  if (u.tls) {
    auto made = client_context(options);
    if (!made) return made.error();
    ctx = std::move(made).value();
    ssl.reset(SSL_new(ctx.get()));
    if (!ssl || SSL_set_fd(ssl.get(), socket_fd.get()) != 1) return make_error(openssl_error("TLS"));
    if (!is_ip_address(u.host)) SSL_set_tlsext_host_name(ssl.get(), u.host.c_str());
    // A pinned certificate is trusted whatever name it carries; otherwise the name must match.
    if (options.pinned_certificate.empty()) {
      if (is_ip_address(u.host)) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), u.host.c_str());
      } else {
        SSL_set1_host(ssl.get(), u.host.c_str());
      }
    }
    auto handshake =
        tls_step(ssl.get(), socket_fd.get(), deadline, "TLS handshake", [&] { return SSL_connect(ssl.get()); });
    if (!handshake) return handshake.error();
    if (*handshake == 0) return make_error("the daemon closed the connection during the TLS handshake");
  }

  std::string request = "GET " + u.target + " HTTP/1.1\r\nHost: " + u.host + "\r\nConnection: close\r\n";
  if (options.basic_auth) request += "Authorization: Basic " + base64(*options.basic_auth) + "\r\n";
  request += "\r\n";
  std::string_view unsent = request;
  while (!unsent.empty()) {
    if (ssl) {
      auto sent = tls_step(ssl.get(), socket_fd.get(), deadline, "TLS write",
                           [&] { return SSL_write(ssl.get(), unsent.data(), static_cast<int>(unsent.size())); });
      if (!sent) return sent.error();
      if (*sent == 0) return make_error("the daemon closed the connection before the request was sent");
      unsent.remove_prefix(static_cast<std::size_t>(*sent));
      continue;
    }
    if (!wait_for(socket_fd.get(), POLLOUT, deadline)) return make_error("the request could not be sent in time");
    const ssize_t n = ::send(socket_fd.get(), unsent.data(), unsent.size(), MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return make_error(std::string("send: ") + std::strerror(errno));
    if (n > 0) unsent.remove_prefix(static_cast<std::size_t>(n));
  }
  constexpr std::size_t kMostReply = 64 << 20;  // a report is a few KiB; anything near this is not one
  std::string reply;
  char buffer[16384];
  for (;;) {
    if (ssl) {
      auto got = tls_step(ssl.get(), socket_fd.get(), deadline, "TLS read",
                          [&] { return SSL_read(ssl.get(), buffer, sizeof buffer); });
      if (!got) return got.error();
      if (*got == 0) break;
      reply.append(buffer, static_cast<std::size_t>(*got));
    } else {
      if (!wait_for(socket_fd.get(), POLLIN, deadline)) return make_error("no complete answer within the timeout");
      const ssize_t n = ::recv(socket_fd.get(), buffer, sizeof buffer, 0);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return make_error(std::string("recv: ") + std::strerror(errno));
      }
      reply.append(buffer, static_cast<std::size_t>(n));
    }
    if (reply.size() > kMostReply) return make_error("the answer is larger than 64 MiB");
  }
  // HTTP/1.1 200 OK\r\n...headers...\r\n\r\nbody (Connection: close: the body runs to the end).
  const std::size_t end_of_head = reply.find("\r\n\r\n");
  if (reply.compare(0, 5, "HTTP/") != 0 || end_of_head == std::string::npos) {
    return make_error("not an HTTP answer");
  }
  const std::size_t space = reply.find(' ');
  HttpReply out;
  if (space == std::string::npos || space + 4 > end_of_head) return make_error("no status in the answer");
  out.status = std::atoi(reply.c_str() + space + 1);
  if (out.status < 100 || out.status > 599) return make_error("a malformed status line");
  const std::string_view head(reply.data(), end_of_head);
  if (head.find("\r\nTransfer-Encoding: chunked") != std::string_view::npos) {
    return make_error("chunked answers are not supported");
  }
  out.body = reply.substr(end_of_head + 4);
  return out;
}

Status unix_socket_connectable(const std::string& path) {
  auto connected = connect_unix(path, Clock::now() + std::chrono::milliseconds(500));
  if (!connected) return connected.error();
  return Ok{};
}

}  // namespace memdiag
