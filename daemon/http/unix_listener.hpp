// SPDX-License-Identifier: Apache-2.0
// The listening Unix domain socket for web.unix_socket (Linux): the endpoints for local root,
// without the web config's TLS and basic auth, so that `memdiagd diagnose` run as root on the
// node needs no credentials. Its mode is 0600 from the moment it exists (the umask is narrowed
// around bind), so only its owner (the daemon's user) and root (CAP_DAC_OVERRIDE) can connect;
// each connection's peer is checked again (SO_PEERCRED) in case the file's mode is loosened later.
//
// No capability is needed to make it: the daemon's user must be able to write the directory
// (the systemd unit's RuntimeDirectory=memdiag, /run/memdiag, owned by root, mode 0700). A
// daemon started by hand makes that directory itself when it is missing (its last component
// only, mode 0700, as RuntimeDirectory= would), so the shipped config works outside systemd.
#pragma once

#include <sys/types.h>

#include <string>

#include "daemon/http/native_socket.hpp"
#include "probes/core/expected.hpp"

namespace memdiag::http {

class UnixSocketListener {
 public:
  // Binds and listens at `path` (absolute, fits sun_path: check_unix_socket_path). A socket file
  // already there is removed first when no process answers on it (a daemon that was killed left
  // it); one that answers, or a file that is not a socket, is an error and is left alone.
  static Expected<UnixSocketListener> listen(const std::string& path);

  UnixSocketListener(UnixSocketListener&& other) noexcept;
  UnixSocketListener& operator=(UnixSocketListener&&) = delete;
  UnixSocketListener(const UnixSocketListener&) = delete;
  UnixSocketListener& operator=(const UnixSocketListener&) = delete;
  // Removes the socket file, if it is still the one this listener made (another daemon may have
  // taken the path since).
  ~UnixSocketListener();

  const std::string& path() const { return path_; }
  // The listening socket, for the server loop; the file stays this object's to remove.
  UniqueSocket take_socket() { return std::move(socket_); }

 private:
  UnixSocketListener(std::string path, UniqueSocket socket, dev_t device, ino_t inode);
  std::string path_;
  UniqueSocket socket_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  bool owns_file_ = false;
};

// Whether the peer of a connection accepted on a Unix socket may be served: root, or the
// daemon's own user. `peer` says who it was ("uid 65534, pid 1234") for a refusal's log line.
bool unix_peer_allowed(NativeSocket connection, std::string& peer);

}  // namespace memdiag::http
