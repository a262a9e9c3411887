// SPDX-License-Identifier: Apache-2.0
// What stands between a connection and the endpoints when a web config is in force
// (--web.config.file): the stream a new connection talks through (TLS or plain), whether a
// request may be served (basic auth), and the header fields every response carries. The event
// loop and the connections only see this interface; the daemon's implementation
// (daemon/web_access_gate.hpp) holds the config, its reloads, the password checks and their
// worker thread. Without a web config there is no gate and every request is served.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "daemon/http/byte_stream.hpp"
#include "daemon/http/native_socket.hpp"
#include "daemon/http/request_head.hpp"
#include "daemon/http/response.hpp"

namespace memdiag::http {

// Names one connection across the loop's turns: the socket alone is not enough, since a
// descriptor is reused as soon as its connection is closed.
struct ConnectionTicket {
  NativeSocket socket = kNoSocket;
  std::uint64_t serial = 0;
};

struct Admission {
  enum class Decision {
    kServe,    // answer the request
    kRefuse,   // send `refusal` instead (401, 503)
    kPending,  // a password is being checked off the loop thread: wait for its verdict
  };
  Decision decision = Decision::kServe;
  WireResponse refusal;
};

// The answer to an Admission::kPending request, for the connection `ticket` names.
struct Verdict {
  ConnectionTicket ticket;
  bool granted = false;
};

class AccessGate {
 public:
  virtual ~AccessGate() = default;

  // The stream of a connection just accepted, under the web config in force now: TLS when it
  // has a tls_server_config (a config changed later applies to later connections).
  virtual std::unique_ptr<ByteStream> open(UniqueSocket socket) = 0;

  // Whether the request `head` of connection `ticket` may be served. `verdict`: the answer to
  // an earlier kPending for this same head (then it is never kPending again).
  virtual Admission admit(const RequestHead& head, ConnectionTicket ticket, std::optional<bool> verdict) = 0;

  // Changes whenever the policy open() applies changes: plain or TLS, and whom TLS admits (client
  // auth type, CA file, allowed SANs, versions, ciphers), not a renewed certificate. A kept-alive
  // connection opened under another policy is closed at its next request without an answer, so
  // turning TLS or client certificates on does not leave a scraper's old connection served.
  virtual std::uint64_t stream_generation() = 0;

  // Adds the configured header fields (http_server_config.headers) to a response.
  virtual void add_fields(WireResponse& response) = 0;

  // Verdicts that arrived since the last call. The gate calls the `wake` it was given (from
  // another thread) when there are some.
  virtual std::vector<Verdict> take_verdicts() = 0;

  // Called by the loop at least once a second, clients or not: the gate looks at its config's
  // files then (at most once a second anyway), so an edit applies, or a broken one is logged,
  // without waiting for a client.
  virtual void refresh() = 0;

  // How the gate wakes the loop for its verdicts; an empty function detaches it (the loop is
  // going away). Thread-safe.
  virtual void set_wake(std::function<void()> wake) = 0;
};

}  // namespace memdiag::http
