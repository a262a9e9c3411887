#include "daemon/http/listener.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace memdiag::http {
namespace {

Error cannot_listen(const std::string& address, const std::string& why) {
  return make_error("cannot listen on " + address + ": " + why);
}

}  // namespace

Expected<UniqueFd> listen_on(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return cannot_listen(address, "expected HOST:PORT");
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;  // a bare ":PORT" is every IPv4 interface
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST;  // names: see listener.hpp
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return cannot_listen(address, std::string("cannot resolve: ") + ::gai_strerror(rc));
  }
  std::string why = "no address to bind";
  UniqueFd bound;
  for (const addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) {
      why = std::strerror(errno);
      continue;
    }
    // A restarted daemon binds again at once despite its old connections in TIME_WAIT; a port
    // another socket listens on is still refused (Linux checks for listeners regardless).
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      why = std::strerror(errno);
      continue;
    }
    bound = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!bound) return cannot_listen(address, why);
  return bound;
}

}  // namespace memdiag::http
