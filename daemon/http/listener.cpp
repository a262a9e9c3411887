// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/listener.hpp"

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <netdb.h>
#include <sys/socket.h>
#endif

namespace memdiag::http {
namespace {

Error cannot_listen(const std::string& address, const std::string& why) {
  return make_error("cannot listen on " + address + ": " + why);
}

}  // namespace

Expected<UniqueSocket> listen_on(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return cannot_listen(address, "expected HOST:PORT");
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!start_socket_layer()) return cannot_listen(address, last_socket_error());

  addrinfo hints{};
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;  // a bare ":PORT" is every IPv4 interface
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST;  // names: see listener.hpp
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return cannot_listen(address, std::string("cannot resolve: ") + ::gai_strerror(rc));
  }
  std::string why = "no address to bind";
  UniqueSocket bound;
  for (const addrinfo* a = found; a != nullptr && !bound; a = a->ai_next) {
    UniqueSocket socket = open_stream_socket(a->ai_family, a->ai_protocol);
    if (!socket) {
      why = last_socket_error();
      continue;
    }
    allow_quick_rebind(socket.get());
    if (::bind(socket.get(), a->ai_addr, static_cast<int>(a->ai_addrlen)) != 0 || ::listen(socket.get(), SOMAXCONN) != 0) {
      why = last_socket_error();
      continue;
    }
    bound = std::move(socket);
  }
  ::freeaddrinfo(found);
  if (!bound) return cannot_listen(address, why);
  return bound;
}

}  // namespace memdiag::http
