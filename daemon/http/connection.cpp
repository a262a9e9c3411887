// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/connection.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace memdiag::http {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

}  // namespace

Connection::Connection(std::unique_ptr<ByteStream> stream, Clock::time_point now, const ServerLimits& limits,
                       AccessGate* gate, std::uint64_t serial)
    : stream_(std::move(stream)), limits_(limits), gate_(gate), serial_(serial), since_(now) {
  if (gate_ != nullptr) stream_generation_ = gate_->stream_generation();
}

Connection::Clock::time_point Connection::deadline() const {
  switch (phase_) {
    case Phase::kAwaitingHead:
      // A kept-alive connection idles until a byte of its next request comes; from then on,
      // and from accepting a new connection, the whole head has header_timeout.
      return since_ + (served_ && in_.empty() ? limits_.keep_alive_timeout : limits_.header_timeout);
    case Phase::kAuthenticating:
      // The password check is part of answering the head in time: a verdict that has not come
      // by the head's deadline (the check queue is bounded, so it comes well before) is not
      // waited for.
      return since_ + limits_.header_timeout;
    case Phase::kResponding:
      return since_ + limits_.write_timeout;
    case Phase::kClosing:
      return since_ + limits_.linger;
    case Phase::kDone:
      break;
  }
  return since_;
}

EvictionCandidate Connection::eviction_candidate() const {
  switch (phase_) {
    case Phase::kAwaitingHead:
    case Phase::kAuthenticating:  // waits like a head that has not arrived: no answer to lose yet
      if (!served_) return {Standing::kNoRequestYet, since_};
      return {in_.empty() ? Standing::kIdle : Standing::kPartialHead, since_};
    case Phase::kResponding:
      return {Standing::kResponding, since_};
    case Phase::kClosing:
    case Phase::kDone:
      break;
  }
  return {Standing::kClosing, since_};
}

Interest Connection::interest() const {
  switch (phase_) {
    case Phase::kAwaitingHead:
    case Phase::kClosing:
      return other_direction_ ? Interest::kWritable : Interest::kReadable;
    case Phase::kResponding:
      return other_direction_ ? Interest::kReadable : Interest::kWritable;
    case Phase::kAuthenticating:
    case Phase::kDone:
      break;
  }
  return Interest::kNothing;
}

bool Connection::has_buffered_input() const {
  return (phase_ == Phase::kAwaitingHead || phase_ == Phase::kClosing) && stream_->has_buffered_input();
}

void Connection::set_phase(Phase phase) {
  phase_ = phase;
  other_direction_ = false;
}

void Connection::note(const IoResult& result) {
  other_direction_ = result.status == IoStatus::kWouldBlock && result.other_direction;
}

void Connection::on_ready(const Readiness& ready, Clock::time_point now, const Handlers& handlers) {
  switch (phase_) {
    case Phase::kAwaitingHead:
    case Phase::kClosing:
      if (ready.readable || ready.writable || ready.broken) on_readable(now, handlers);
      break;
    case Phase::kResponding:
      if (ready.readable || ready.writable || ready.broken) on_writable(now, handlers);
      break;
    case Phase::kAuthenticating:
      // Nothing is read meanwhile (the pipelined rest waits in the socket); a peer that hung up
      // or reset will not take the answer.
      if (ready.broken) phase_ = Phase::kDone;
      break;
    case Phase::kDone:
      break;
  }
}

void Connection::on_verdict(bool granted, Clock::time_point now, const Handlers& handlers) {
  if (phase_ != Phase::kAuthenticating) return;
  verdict_ = granted;
  set_phase(Phase::kAwaitingHead);
  serve_buffered(now, handlers);  // the same head again, now with its verdict
}

void Connection::on_readable(Clock::time_point now, const Handlers& handlers) {
  if (phase_ == Phase::kClosing) {
    char discard[kReadChunk];
    const IoResult r = stream_->read(discard, sizeof discard);
    note(r);
    if (r.status == IoStatus::kEnd) phase_ = Phase::kDone;
    return;
  }
  if (phase_ != Phase::kAwaitingHead) return;
  // Never more than one byte past the head limit: enough to know it was exceeded.
  const std::size_t room = limits_.max_head_bytes + 1 - std::min(in_.size(), limits_.max_head_bytes);
  const std::size_t old_size = in_.size();
  in_.resize(old_size + std::min(room, kReadChunk));
  const IoResult r = stream_->read(in_.data() + old_size, in_.size() - old_size);
  in_.resize(old_size + r.bytes);
  note(r);
  if (r.status == IoStatus::kEnd) {
    phase_ = Phase::kDone;  // the client left (or reset) before completing a request
    return;
  }
  if (r.status == IoStatus::kWouldBlock) return;
  if (old_size == 0 && served_) since_ = now;  // the next request's head starts its clock
  serve_buffered(now, handlers);
}

void Connection::serve_buffered(Clock::time_point now, const Handlers& handlers) {
  if (gate_ != nullptr && gate_->stream_generation() != stream_generation_) {
    phase_ = Phase::kDone;  // opened under another stream policy: the client reconnects under this one
    return;
  }
  const std::size_t end = find_head_end(in_, scanned_);
  if (end == std::string::npos) {
    scanned_ = in_.size();
    if (in_.size() > limits_.max_head_bytes) {
      start_response(refuse(HeadError{431, "request head longer than " + std::to_string(limits_.max_head_bytes) +
                                               " bytes"}),
                     now, handlers);
    }
    return;
  }
  if (end > limits_.max_head_bytes) {
    start_response(refuse(HeadError{431, "request head longer than " + std::to_string(limits_.max_head_bytes) +
                                             " bytes"}),
                   now, handlers);
    return;
  }
  WireResponse response;
  {
    auto head = parse_request_head(std::string_view(in_).substr(0, end));
    if (!head) {
      response = refuse(head.error());
    } else {
      Admission admission;
      if (gate_ != nullptr) admission = gate_->admit(*head, ticket(), std::exchange(verdict_, std::nullopt));
      switch (admission.decision) {
        case Admission::Decision::kPending:
          // The head stays at the front of in_ and is parsed again when the verdict comes.
          set_phase(Phase::kAuthenticating);
          return;
        case Admission::Decision::kRefuse:
          response = std::move(admission.refusal);
          break;
        case Admission::Decision::kServe:
          try {
            response = respond(*head, handlers);
          } catch (const std::exception& e) {  // e.g. bad_alloc rendering: this request fails, not the daemon
            response = refuse(HeadError{500, std::string("cannot answer: ") + e.what()});
          }
          break;
      }
    }
  }  // the head's views into in_ end here, before in_ moves on
  in_.erase(0, end);
  scanned_ = 0;
  start_response(std::move(response), now, handlers);
}

void Connection::start_response(WireResponse response, Clock::time_point now, const Handlers& handlers) {
  out_ = std::move(response);
  if (gate_ != nullptr) gate_->add_fields(out_);
  sent_ = 0;
  set_phase(Phase::kResponding);
  since_ = now;
  send_pending(now, handlers);  // usually all of it leaves now, without waiting for EPOLLOUT
}

void Connection::on_writable(Clock::time_point now, const Handlers& handlers) {
  if (phase_ == Phase::kResponding) send_pending(now, handlers);
}

void Connection::send_pending(Clock::time_point now, const Handlers& handlers) {
  const std::string_view head = out_.head;
  const std::string_view body = out_.body ? std::string_view(*out_.body) : std::string_view();
  while (sent_ < out_.size()) {
    const IoResult r = sent_ < head.size() ? stream_->write(head.substr(sent_), body)
                                           : stream_->write(body.substr(sent_ - head.size()));
    note(r);
    if (r.status == IoStatus::kWouldBlock) return;
    if (r.status == IoStatus::kEnd) {
      phase_ = Phase::kDone;
      return;
    }
    sent_ += r.bytes;
    // write_timeout counts from the last progress, not from the start: a big exposition
    // over a slow link that keeps reading is let finish; one that stops reading is not.
    since_ = now;
  }
  served_ = true;
  const bool close = out_.close;
  out_ = WireResponse{};  // the exposition is not kept while the connection idles
  if (close) {
    start_closing(now);
    return;
  }
  set_phase(Phase::kAwaitingHead);
  since_ = now;
  if (!in_.empty()) serve_buffered(now, handlers);  // a pipelined request came with the last one
}

void Connection::start_closing(Clock::time_point now) {
  stream_->shutdown_write();
  in_.clear();
  in_.shrink_to_fit();
  set_phase(Phase::kClosing);
  since_ = now;
}

}  // namespace memdiag::http
