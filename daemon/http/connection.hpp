// One client connection of the HTTP server, as a state machine driven by readiness: it reads
// a request head as its bytes come (never waiting for them), answers it, sends the answer as
// the client takes it, and either waits for the next request (keep-alive, pipelining) or
// closes. It holds no thread: the event loop calls it when its socket is ready or its
// deadline has passed, and asks it what it waits for next.
#pragma once

#include <chrono>
#include <string>

#include "daemon/http/connection_eviction.hpp"
#include "daemon/http/endpoints.hpp"
#include "daemon/http/response.hpp"
#include "daemon/http/server_limits.hpp"
#include "daemon/http/socket_stream.hpp"

namespace memdiag::http {

class Connection {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase {
    kAwaitingHead,  // reading a request head (the first, or the next on a kept-alive connection)
    kResponding,    // sending a response
    kClosing,       // write side shut after the last response; draining input until EOF
    kDone,          // to be closed
  };

  Connection(SocketStream stream, Clock::time_point now, const ServerLimits& limits);

  void on_readable(Clock::time_point now, const Handlers& handlers);
  void on_writable(Clock::time_point now, const Handlers& handlers);
  // Called once deadline() has passed: the connection is done.
  void on_deadline() { phase_ = Phase::kDone; }

  Phase phase() const { return phase_; }
  Clock::time_point deadline() const;
  EvictionCandidate eviction_candidate() const;
  NativeSocket socket() const { return stream_.socket(); }
  // The shared body of the response being sent (held until it is sent), or null.
  const std::string* held_body() const { return phase_ == Phase::kResponding ? out_.body.get() : nullptr; }

 private:
  // Answers every complete head in the buffer, one at a time, starting to send each answer.
  void serve_buffered(Clock::time_point now, const Handlers& handlers);
  void start_response(WireResponse response, Clock::time_point now, const Handlers& handlers);
  void send_pending(Clock::time_point now, const Handlers& handlers);
  void start_closing(Clock::time_point now);

  SocketStream stream_;
  const ServerLimits& limits_;
  Phase phase_ = Phase::kAwaitingHead;
  // When the current phase (or the current request head) began; while responding, when the
  // client last took bytes of the response.
  Clock::time_point since_;
  bool served_ = false;      // at least one response sent
  std::string in_;           // received and not yet consumed
  std::size_t scanned_ = 0;  // bytes of in_ already searched for the end of a head
  WireResponse out_;
  std::size_t sent_ = 0;  // bytes of out_ (head, then body) sent
};

}  // namespace memdiag::http
