// SPDX-License-Identifier: Apache-2.0
// LocalHttpServer where there are no Unix sockets to give it (the Windows build): refused with
// the reason. The start refuses web.unix_socket before this is reached (startup.cpp); a reload
// that names one logs this and goes on without it.
#include "daemon/local_http_server.hpp"

namespace memdiag {

struct LocalHttpServer::State {};

Expected<std::unique_ptr<LocalHttpServer>> LocalHttpServer::start(const std::string& path, http::Handlers) {
  return make_error("cannot listen on unix:" + path + ": web.unix_socket is not supported on Windows");
}

LocalHttpServer::~LocalHttpServer() = default;

}  // namespace memdiag
