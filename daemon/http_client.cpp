// SPDX-License-Identifier: Apache-2.0
#include "daemon/http_client.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "probes/linux/unique_fd.hpp"

namespace memdiag {

namespace {

using Clock = std::chrono::steady_clock;

struct Url {
  std::string host;
  std::string port;
  std::string target;
};

Expected<Url> parse_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return make_error("only http:// URLs are supported: " + std::string(url));
  url.remove_prefix(kScheme.size());
  const std::size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  Url out;
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
  if (out.port.empty()) out.port = "80";
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

}  // namespace

Expected<HttpReply> http_get(const std::string& url, std::chrono::milliseconds timeout) {
  auto parsed = parse_url(url);
  if (!parsed) return parsed.error();
  const Url& u = *parsed;
  const auto deadline = Clock::now() + timeout;

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

  const std::string request = "GET " + u.target + " HTTP/1.1\r\nHost: " + u.host + "\r\nConnection: close\r\n\r\n";
  std::string_view unsent = request;
  while (!unsent.empty()) {
    if (!wait_for(socket_fd.get(), POLLOUT, deadline)) return make_error("the request could not be sent in time");
    const ssize_t n = ::send(socket_fd.get(), unsent.data(), unsent.size(), MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return make_error(std::string("send: ") + std::strerror(errno));
    if (n > 0) unsent.remove_prefix(static_cast<std::size_t>(n));
  }
  constexpr std::size_t kMostReply = 64 << 20;  // a report is a few KiB; anything near this is not one
  std::string reply;
  char buffer[16384];
  for (;;) {
    if (!wait_for(socket_fd.get(), POLLIN, deadline)) return make_error("no complete answer within the timeout");
    const ssize_t n = ::recv(socket_fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return make_error(std::string("recv: ") + std::strerror(errno));
    }
    reply.append(buffer, static_cast<std::size_t>(n));
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

}  // namespace memdiag
