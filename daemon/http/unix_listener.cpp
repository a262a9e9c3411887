// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/unix_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace memdiag::http {
namespace {

Error cannot_listen(const std::string& path, const std::string& why) {
  return make_error("cannot listen on unix:" + path + ": " + why);
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);  // fits: checked by the caller
  return address;
}

// Whether a process listens on the socket at `path` (a running daemon). Non-blocking, so a
// listener whose backlog is full (EAGAIN) counts as one instead of stalling the start.
bool someone_listens(const sockaddr_un& address) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!probe) return false;
  return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 || errno == EAGAIN;
}

}  // namespace

Expected<UnixSocketListener> UnixSocketListener::listen(const std::string& path) {
  if (path.empty() || path.front() != '/' || path.size() >= sizeof(sockaddr_un::sun_path)) {
    return cannot_listen(path, "not an absolute path that fits a Unix socket address");
  }
  const sockaddr_un address = address_of(path);
  // The directory, as RuntimeDirectory= makes it under systemd: only its last component, 0700.
  const std::string directory = path.substr(0, std::max<std::size_t>(path.rfind('/'), 1));
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return cannot_listen(path, "cannot make its directory " + directory + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return cannot_listen(path, "the file there is not a socket; not removing it");
    if (someone_listens(address)) return cannot_listen(path, "another process is serving on it");
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return cannot_listen(path, std::string("cannot remove the stale socket: ") + std::strerror(errno));
    }
  } else if (errno != ENOENT) {
    return cannot_listen(path, std::strerror(errno));
  }

  UniqueSocket socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket) return cannot_listen(path, std::strerror(errno));
  // The file is made by bind with the mode the umask leaves of 0777: 0600 from its first moment,
  // not loosened after (a chmod after bind leaves a window, and one by path could be raced).
  const mode_t saved = ::umask(0177);
  const int bound = ::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_errno = errno;
  ::umask(saved);
  if (bound != 0) return cannot_listen(path, std::strerror(bind_errno));
  // Which file is ours, so that only it is removed at the end.
  struct stat made {};
  if (::lstat(path.c_str(), &made) != 0) {
    return cannot_listen(path, std::string("the socket file vanished: ") + std::strerror(errno));
  }
  UnixSocketListener listener(path, std::move(socket), made.st_dev, made.st_ino);
  if (::listen(listener.socket_.get(), SOMAXCONN) != 0) return cannot_listen(path, std::strerror(errno));
  return listener;
}

UnixSocketListener::UnixSocketListener(std::string path, UniqueSocket socket, dev_t device, ino_t inode)
    : path_(std::move(path)), socket_(std::move(socket)), device_(device), inode_(inode), owns_file_(true) {}

UnixSocketListener::UnixSocketListener(UnixSocketListener&& other) noexcept
    : path_(std::move(other.path_)),
      socket_(std::move(other.socket_)),
      device_(other.device_),
      inode_(other.inode_),
      owns_file_(std::exchange(other.owns_file_, false)) {}

UnixSocketListener::~UnixSocketListener() {
  if (!owns_file_) return;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == device_ && st.st_ino == inode_) {
    ::unlink(path_.c_str());
  }
}

bool unix_peer_allowed(NativeSocket connection, std::string& peer) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    peer = std::string("unknown (SO_PEERCRED: ") + std::strerror(errno) + ")";
    return false;
  }
  peer = "uid " + std::to_string(credentials.uid) + ", pid " + std::to_string(credentials.pid);
  return credentials.uid == 0 || credentials.uid == ::geteuid();
}

}  // namespace memdiag::http
