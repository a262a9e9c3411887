// SPDX-License-Identifier: Apache-2.0
// One client connection of the HTTP server, as a state machine driven by readiness: it reads
// a request head as its bytes come (never waiting for them), answers it, sends the answer as
// the client takes it, and either waits for the next request (keep-alive, pipelining) or
// closes. It holds no thread: the event loop calls it when its socket is ready or its
// deadline has passed, and asks it what it waits for next. With a web config, an AccessGate
// decides whether each request is served, and the stream may be TLS.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "daemon/http/access_gate.hpp"
#include "daemon/http/byte_stream.hpp"
#include "daemon/http/connection_eviction.hpp"
#include "daemon/http/endpoints.hpp"
#include "daemon/http/poller.hpp"
#include "daemon/http/response.hpp"
#include "daemon/http/server_limits.hpp"

namespace memdiag::http {

class Connection {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase {
    kAwaitingHead,    // reading a request head (the first, or the next on a kept-alive
                      // connection; over TLS the handshake comes first, within the same deadline)
    kAuthenticating,  // a complete head waits for the gate's verdict on its password; reads nothing
    kResponding,      // sending a response
    kClosing,         // write side shut after the last response; draining input until EOF
    kDone,            // to be closed
  };

  // `gate`: null serves every request (no web config); else it outlives the connection.
  Connection(std::unique_ptr<ByteStream> stream, Clock::time_point now, const ServerLimits& limits,
             AccessGate* gate = nullptr, std::uint64_t serial = 0);

  void on_readable(Clock::time_point now, const Handlers& handlers);
  void on_writable(Clock::time_point now, const Handlers& handlers);
  // Whatever the poller reported: the read or write the current phase waits for (TLS may wait
  // on the other direction, see interest()); a hang-up while authenticating ends it.
  void on_ready(const Readiness& ready, Clock::time_point now, const Handlers& handlers);
  // The gate's answer for the head waiting in kAuthenticating.
  void on_verdict(bool granted, Clock::time_point now, const Handlers& handlers);
  // Called once deadline() has passed: the connection is done.
  void on_deadline() { phase_ = Phase::kDone; }

  Phase phase() const { return phase_; }
  Clock::time_point deadline() const;
  EvictionCandidate eviction_candidate() const;
  // What the socket must become for the connection to go on.
  Interest interest() const;
  // Input the stream holds that the socket will not announce (TLS): the loop reads it unasked.
  bool has_buffered_input() const;
  NativeSocket socket() const { return stream_->socket(); }
  ConnectionTicket ticket() const { return {stream_->socket(), serial_}; }
  // The shared body of the response being sent (held until it is sent), or null.
  const std::string* held_body() const { return phase_ == Phase::kResponding ? out_.body.get() : nullptr; }

 private:
  // Answers every complete head in the buffer, one at a time, starting to send each answer.
  void serve_buffered(Clock::time_point now, const Handlers& handlers);
  void start_response(WireResponse response, Clock::time_point now, const Handlers& handlers);
  void send_pending(Clock::time_point now, const Handlers& handlers);
  void start_closing(Clock::time_point now);
  void set_phase(Phase phase);
  // Notes which way a kWouldBlock waits (interest()).
  void note(const IoResult& result);

  std::unique_ptr<ByteStream> stream_;
  const ServerLimits& limits_;
  AccessGate* gate_;
  std::uint64_t serial_;
  std::uint64_t stream_generation_ = 0;  // the gate's when the connection was opened
  Phase phase_ = Phase::kAwaitingHead;
  // The last call waited for the other direction of the socket than the phase's own (TLS).
  bool other_direction_ = false;
  // The gate's verdict on the head at the front of in_, between kAuthenticating and its answer.
  std::optional<bool> verdict_;
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
