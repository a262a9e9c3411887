// SPDX-License-Identifier: Apache-2.0
// The web config in force, and its reloads when the file (or a certificate, key or CA file it
// names) changes. The exporter-toolkit reads the file again on every request and its TLS
// files on every handshake; here the loop asks current() per new connection and per request,
// and that looks at the files' modification times and sizes at most once a second, loading the
// config again only when they changed: a new certificate is used by the connections after it
// (within a second), at the cost of a few stat calls a second under load and none when idle.
//
// A changed file that does not load (half written, a typo, a key that does not match) is logged
// once and the last good config stays in force; it is tried again when the files change again.
// Thread-safe: the HTTP loop reads it, SIGHUP retargets it (the daemon's main thread).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/web_security.hpp"

namespace memdiag {

class WebConfigWatcher {
 public:
  using Clock = std::chrono::steady_clock;

  // `path` empty (no web config) or the file `loaded` came from.
  WebConfigWatcher(std::string path, std::shared_ptr<const WebSecurity> loaded,
                   std::chrono::milliseconds check_every = std::chrono::seconds(1));

  // The config in force (null: none), reloaded first if its files changed since they were last
  // looked at, at most once per check_every.
  std::shared_ptr<const WebSecurity> current();

  // Another file, or none, already loaded (a reload of the main config changed web.config_file).
  void retarget(std::string path, std::shared_ptr<const WebSecurity> loaded);

  const std::string& path() const { return path_; }

 private:
  // What the files look like now: each one's modification time and size (or that it is missing).
  std::string fingerprint() const;

  std::mutex mutex_;
  std::string path_;
  std::shared_ptr<const WebSecurity> security_;
  std::chrono::milliseconds check_every_;
  Clock::time_point checked_{};
  std::string fingerprint_;
  // The files of the last config that loaded: a broken edit keeps watching the certificate
  // files of the config still in force.
  std::vector<std::string> named_files_;
};

}  // namespace memdiag
