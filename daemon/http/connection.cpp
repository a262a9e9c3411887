#include "daemon/http/connection.hpp"

#include <algorithm>
#include <exception>

namespace memdiag::http {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

}  // namespace

Connection::Connection(SocketStream stream, Clock::time_point now, const ServerLimits& limits)
    : stream_(std::move(stream)), limits_(limits), since_(now) {}

Connection::Clock::time_point Connection::deadline() const {
  switch (phase_) {
    case Phase::kAwaitingHead:
      // A kept-alive connection idles until a byte of its next request comes; from then on,
      // and from accepting a new connection, the whole head has header_timeout.
      return since_ + (served_ && in_.empty() ? limits_.keep_alive_timeout : limits_.header_timeout);
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

void Connection::on_readable(Clock::time_point now, const Handlers& handlers) {
  if (phase_ == Phase::kClosing) {
    char discard[kReadChunk];
    if (stream_.read(discard, sizeof discard).status == IoStatus::kEnd) phase_ = Phase::kDone;
    return;
  }
  if (phase_ != Phase::kAwaitingHead) return;
  // Never more than one byte past the head limit: enough to know it was exceeded.
  const std::size_t room = limits_.max_head_bytes + 1 - std::min(in_.size(), limits_.max_head_bytes);
  const std::size_t old_size = in_.size();
  in_.resize(old_size + std::min(room, kReadChunk));
  const IoResult r = stream_.read(in_.data() + old_size, in_.size() - old_size);
  in_.resize(old_size + r.bytes);
  if (r.status == IoStatus::kEnd) {
    phase_ = Phase::kDone;  // the client left (or reset) before completing a request
    return;
  }
  if (r.status == IoStatus::kWouldBlock) return;
  if (old_size == 0 && served_) since_ = now;  // the next request's head starts its clock
  serve_buffered(now, handlers);
}

void Connection::serve_buffered(Clock::time_point now, const Handlers& handlers) {
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
      try {
        response = respond(*head, handlers);
      } catch (const std::exception& e) {  // e.g. bad_alloc rendering: this request fails, not the daemon
        response = refuse(HeadError{500, std::string("cannot answer: ") + e.what()});
      }
    }
  }  // the head's views into in_ end here, before in_ moves on
  in_.erase(0, end);
  scanned_ = 0;
  start_response(std::move(response), now, handlers);
}

void Connection::start_response(WireResponse response, Clock::time_point now, const Handlers& handlers) {
  out_ = std::move(response);
  sent_ = 0;
  phase_ = Phase::kResponding;
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
    const IoResult r = sent_ < head.size() ? stream_.write(head.substr(sent_), body)
                                           : stream_.write(body.substr(sent_ - head.size()));
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
  phase_ = Phase::kAwaitingHead;
  since_ = now;
  if (!in_.empty()) serve_buffered(now, handlers);  // a pipelined request came with the last one
}

void Connection::start_closing(Clock::time_point now) {
  stream_.shutdown_write();
  in_.clear();
  in_.shrink_to_fit();
  phase_ = Phase::kClosing;
  since_ = now;
}

}  // namespace memdiag::http
