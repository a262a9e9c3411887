// SPDX-License-Identifier: Apache-2.0
// Responses on the wire: the head, then the body (shared, not copied), with the length of the
// body, and the fields the e2e tests and Prometheus rely on.
#include "daemon/http/response.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "daemon/http/connection_eviction.hpp"
#include "daemon/http/endpoints.hpp"
#include "daemon/http/server_limits.hpp"

namespace memdiag::http {
namespace {

TEST(Response, HeadThenASharedBodyNotCopied) {
  auto body = std::make_shared<const std::string>("hello\n");
  const WireResponse r = shared_response({.content_type = "text/plain; version=0.0.4"}, body);
  EXPECT_EQ(r.bytes(),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: 6\r\n"
            "Cache-Control: no-store\r\n\r\nhello\n");
  EXPECT_EQ(r.body.get(), body.get());  // the same buffer, whoever else sends it
  EXPECT_EQ(r.size(), r.bytes().size());
  EXPECT_FALSE(r.close);
  const WireResponse head_only = shared_response({}, body, true);
  EXPECT_EQ(head_only.body, nullptr);
  EXPECT_NE(head_only.head.find("Content-Length: 6\r\n"), std::string::npos);
}

TEST(Response, CloseAllowAndHead) {
  const WireResponse r = text_response({.status = 405, .close = true, .allow = "GET, HEAD"}, "no\n", true);
  EXPECT_EQ(r.bytes(),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
            "Cache-Control: no-store\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(r.close);
}

TEST(Response, ALongHeadComesOutWhole) {
  const std::string type(400, 't');
  const WireResponse r = text_response({.content_type = type}, "body");
  EXPECT_EQ(r.bytes().substr(0, 17), "HTTP/1.1 200 OK\r\n");
  EXPECT_NE(r.bytes().find(type), std::string_view::npos);
  EXPECT_EQ(r.bytes().substr(r.bytes().size() - 8), "\r\n\r\nbody");
}

RequestHead get(std::string_view text) {
  auto head = parse_request_head(text);
  EXPECT_TRUE(head);
  return *head;
}

struct Endpoints : ::testing::Test {
  bool healthy = true;
  int renders = 0;
  Handlers handlers{[this] {
                      ++renders;
                      return std::make_shared<const std::string>("memdiag_up 1\n");
                    },
                    [this] { return healthy; }, {}};
};

TEST_F(Endpoints, MetricsHealthIndexAndNotFound) {
  std::string text = std::string(respond(get("GET /metrics HTTP/1.1\r\n\r\n"), handlers).bytes());
  EXPECT_NE(text.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(text.find("\r\n\r\nmemdiag_up 1\n"), std::string::npos);
  EXPECT_EQ(text.find("Connection: close"), std::string::npos);

  EXPECT_EQ(respond(get("GET /healthz HTTP/1.1\r\n\r\n"), handlers).bytes().substr(0, 17), "HTTP/1.1 200 OK\r\n");
  healthy = false;
  text = std::string(respond(get("GET /healthz HTTP/1.1\r\n\r\n"), handlers).bytes());
  EXPECT_EQ(text.substr(0, 33), "HTTP/1.1 503 Service Unavailable\r");
  EXPECT_NE(text.find("sampler stuck"), std::string::npos);

  text = std::string(respond(get("GET /?x HTTP/1.1\r\n\r\n"), handlers).bytes());
  EXPECT_NE(text.find("text/html; charset=utf-8"), std::string::npos);
  EXPECT_NE(text.find("href=\"/metrics\""), std::string::npos);
  EXPECT_EQ(respond(get("GET /index.html HTTP/1.1\r\n\r\n"), handlers).bytes().substr(0, 13), "HTTP/1.1 404 ");
}

TEST_F(Endpoints, HeadHasTheLengthButNoBody) {
  const WireResponse r = respond(get("HEAD /metrics HTTP/1.1\r\n\r\n"), handlers);
  EXPECT_NE(r.bytes().find("Content-Length: 13\r\n"), std::string::npos);
  EXPECT_EQ(r.bytes().substr(r.bytes().size() - 4), "\r\n\r\n");
}

TEST_F(Endpoints, OtherMethodsAndBodiesAndHttp10Close) {
  WireResponse r = respond(get("POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\n"), handlers);
  EXPECT_EQ(r.bytes().substr(0, 13), "HTTP/1.1 405 ");
  EXPECT_TRUE(r.close);  // the unread body must not be taken for the next request
  EXPECT_EQ(renders, 0);
  EXPECT_TRUE(respond(get("GET /metrics HTTP/1.0\r\n\r\n"), handlers).close);
  EXPECT_FALSE(respond(get("GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), handlers).close);
  r = refuse(HeadError{431, "too long"});
  EXPECT_EQ(r.bytes().substr(0, 45), "HTTP/1.1 431 Request Header Fields Too Large\r");
  EXPECT_TRUE(r.close);
}

TEST(ConnectionEviction, ClosingFirstThenTheOldestWaitThenTheLongestStalledResponse) {
  using std::chrono::seconds;
  const auto t = std::chrono::steady_clock::time_point{} + seconds(100);
  EXPECT_EQ(choose_eviction({}), kNoEviction);
  // Clients that ask and never read must not hold the cap either: the longest stalled goes.
  EXPECT_EQ(choose_eviction({{Standing::kResponding, t}, {Standing::kResponding, t - seconds(50)}}), 1u);
  // Among connections that never completed a request, the oldest goes.
  EXPECT_EQ(choose_eviction({{Standing::kNoRequestYet, t}, {Standing::kNoRequestYet, t - seconds(5)},
                             {Standing::kNoRequestYet, t - seconds(1)}}),
            1u);
  // Kept-alive idlers that have waited longer go before a connection accepted since, whose
  // request has not been read yet: 512 of them held by one client cannot push every scraper
  // out before its request is read.
  EXPECT_EQ(choose_eviction({{Standing::kNoRequestYet, t}, {Standing::kIdle, t - seconds(1)}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kIdle, t - seconds(60)}, {Standing::kNoRequestYet, t - seconds(61)}}), 1u);
  // A head in progress is as old as its first byte: a trickle does not make it younger.
  EXPECT_EQ(choose_eviction({{Standing::kIdle, t - seconds(5)}, {Standing::kPartialHead, t - seconds(8)}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kNoRequestYet, t - seconds(60)}, {Standing::kClosing, t}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kResponding, t - seconds(60)}, {Standing::kPartialHead, t}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kResponding, t - seconds(60)}, {Standing::kIdle, t}}), 1u);
}

TEST(ServerLimits, CapIsAQuarterOfTheDescriptorLimitAtMost) {
  EXPECT_EQ(connection_cap(512, 1024), 256u);
  EXPECT_EQ(connection_cap(512, 1u << 20), 512u);
  EXPECT_EQ(connection_cap(512, 20), 16u);
}

}  // namespace
}  // namespace memdiag::http
