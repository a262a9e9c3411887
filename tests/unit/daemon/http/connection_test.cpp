// SPDX-License-Identifier: Apache-2.0
// A connection over a real socket pair: what it answers, when it waits, and which standing
// it has for eviction at each step, driven the way the event loop drives it.
#include "daemon/http/connection.hpp"
#include "daemon/http/socket_stream.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace memdiag::http {
namespace {

using std::chrono::seconds;
using Clock = Connection::Clock;

// /metrics answered with an 8 MiB body: more than a socket takes at once.
Handlers big_handlers() {
  auto body = std::make_shared<const std::string>(std::size_t{8} << 20, 'x');
  return {[body] { return body; }, [] { return true; }, {}};
}

struct ConnectionTest : ::testing::Test {
  ServerLimits limits;
  Handlers handlers{[] { return std::make_shared<const std::string>("m 1\n"); }, [] { return true; }, {}};
  int peer = -1;
  std::unique_ptr<Connection> c;
  Clock::time_point t0 = Clock::now();

  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    peer = fds[1];
    c = std::make_unique<Connection>(std::make_unique<SocketStream>(UniqueFd(fds[0])), t0, limits);
  }
  void TearDown() override { ::close(peer); }

  void send(std::string_view bytes, Clock::time_point at) {
    ASSERT_EQ(::send(peer, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    c->on_readable(at, handlers);
  }
  std::string received() {
    std::string all;
    char buf[65536];
    for (ssize_t n; (n = ::recv(peer, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<std::size_t>(n));
    return all;
  }
};

TEST_F(ConnectionTest, HalfAHeadWaitsWithTheHeaderDeadlineFromAccept) {
  EXPECT_EQ(c->eviction_candidate().standing, Standing::kNoRequestYet);
  send("GET /metrics HTTP/1.1\r\nHost: a\r\n", t0 + seconds(3));
  EXPECT_EQ(c->phase(), Connection::Phase::kAwaitingHead);
  EXPECT_EQ(c->deadline(), t0 + limits.header_timeout);  // bytes trickling in do not extend it
  EXPECT_EQ(received(), "");
}

TEST_F(ConnectionTest, AnswersThenIdlesKeptAliveThenTheNextHeadHasItsOwnDeadline) {
  send("GET /metrics HTTP/1.1\r\n\r\n", t0 + seconds(1));
  EXPECT_EQ(c->phase(), Connection::Phase::kAwaitingHead);  // sent in full at once
  EXPECT_NE(received().find("\r\n\r\nm 1\n"), std::string::npos);
  EXPECT_EQ(c->eviction_candidate().standing, Standing::kIdle);
  EXPECT_EQ(c->deadline(), t0 + seconds(1) + limits.keep_alive_timeout);
  send("GET /hea", t0 + seconds(30));
  EXPECT_EQ(c->eviction_candidate().standing, Standing::kPartialHead);
  EXPECT_EQ(c->deadline(), t0 + seconds(30) + limits.header_timeout);
}

TEST_F(ConnectionTest, PipelinedRequestsAreAnsweredInOrder) {
  send("GET /healthz HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n", t0);
  const std::string out = received();
  const std::size_t ok = out.find("HTTP/1.1 200 OK");
  const std::size_t missing = out.find("HTTP/1.1 404");
  const std::size_t index = out.find("<html>");
  EXPECT_LT(ok, missing);
  EXPECT_LT(missing, index);
  EXPECT_NE(index, std::string::npos);
  EXPECT_EQ(c->phase(), Connection::Phase::kClosing);
  ::shutdown(peer, SHUT_WR);
  c->on_readable(t0, handlers);
  EXPECT_EQ(c->phase(), Connection::Phase::kDone);
}

TEST_F(ConnectionTest, AnOversizedHeadIsRefusedWith431AndClosed) {
  send("GET / HTTP/1.1\r\nX: " + std::string(limits.max_head_bytes, 'a'), t0);
  EXPECT_EQ(received().substr(0, 13), "HTTP/1.1 431 ");
  EXPECT_EQ(c->phase(), Connection::Phase::kClosing);
}

TEST_F(ConnectionTest, AClientThatLeavesIsDone) {
  send("GET /", t0);
  ::shutdown(peer, SHUT_WR);
  c->on_readable(t0, handlers);
  EXPECT_EQ(c->phase(), Connection::Phase::kDone);
}

TEST_F(ConnectionTest, AResponseTheClientDoesNotTakeWaitsWithTheWriteDeadline) {
  Handlers big = big_handlers();
  const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(peer, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  c->on_readable(t0, big);
  EXPECT_EQ(c->phase(), Connection::Phase::kResponding);
  EXPECT_EQ(c->eviction_candidate().standing, Standing::kResponding);
  EXPECT_EQ(c->deadline(), t0 + limits.write_timeout);
  std::size_t got = received().size();
  while (c->phase() == Connection::Phase::kResponding) {
    c->on_writable(t0, big);
    got += received().size();
  }
  EXPECT_GT(got, 8u << 20);
  EXPECT_EQ(c->eviction_candidate().standing, Standing::kIdle);
}

TEST_F(ConnectionTest, TheWriteDeadlineCountsFromTheLastProgressNotFromTheStart) {
  Handlers big = big_handlers();
  const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(peer, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  c->on_readable(t0, big);
  ASSERT_EQ(c->phase(), Connection::Phase::kResponding);
  // A slow reader: a chunk taken every 20 s, so the whole response takes far longer than
  // write_timeout, yet it never waits that long without progress.
  Clock::time_point at = t0;
  std::size_t got = 0;
  while (c->phase() == Connection::Phase::kResponding) {
    at += seconds(20);
    ASSERT_LT(at, c->deadline()) << "cut off after " << got << " bytes";
    got += received().size();
    c->on_writable(at, big);
    if (c->phase() == Connection::Phase::kResponding) {
      EXPECT_EQ(c->deadline(), at + limits.write_timeout);
    }
  }
  got += received().size();
  EXPECT_GT(at - t0, limits.write_timeout);
  EXPECT_GT(got, 8u << 20);
}

TEST_F(ConnectionTest, AWritableEventThatMovesNothingDoesNotExtendTheWriteDeadline) {
  Handlers big = big_handlers();
  const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  ASSERT_EQ(::send(peer, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  c->on_readable(t0, big);
  ASSERT_EQ(c->phase(), Connection::Phase::kResponding);
  c->on_writable(t0 + seconds(10), big);  // the peer read nothing: the socket is still full
  EXPECT_EQ(c->deadline(), t0 + limits.write_timeout);
}

}  // namespace
}  // namespace memdiag::http
