// Responses on the wire: the head in front of the body in one buffer, with the length of the
// body, and the fields the e2e tests and Prometheus rely on.
#include "daemon/http/response.hpp"

#include <gtest/gtest.h>

#include <string>

#include "daemon/http/connection_eviction.hpp"
#include "daemon/http/endpoints.hpp"
#include "daemon/http/server_limits.hpp"

namespace memdiag::http {
namespace {

TEST(Response, HeadThenBodyInOneBuffer) {
  std::string buffer = body_buffer();
  buffer += "hello\n";
  const WireResponse r = finish_response(std::move(buffer), {.content_type = "text/plain; version=0.0.4"});
  EXPECT_EQ(r.bytes(),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: 6\r\n"
            "Cache-Control: no-store\r\n\r\nhello\n");
  EXPECT_FALSE(r.close);
}

TEST(Response, CloseAllowAndHead) {
  const WireResponse r = text_response({.status = 405, .close = true, .allow = "GET, HEAD"}, "no\n", true);
  EXPECT_EQ(r.bytes(),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
            "Cache-Control: no-store\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(r.close);
}

TEST(Response, AHeadLongerThanTheRoomStillComesOut) {
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
  Handlers handlers{[this](std::string& out) {
                      ++renders;
                      out += "memdiag_up 1\n";
                    },
                    [this] { return healthy; }};
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

TEST(ConnectionEviction, OldestWithoutARequestFirstOneRespondingLast) {
  using std::chrono::seconds;
  const auto t = std::chrono::steady_clock::time_point{} + seconds(100);
  EXPECT_EQ(choose_eviction({}), kNoEviction);
  // Clients that ask and never read must not hold the cap either: the longest stalled goes.
  EXPECT_EQ(choose_eviction({{Standing::kResponding, t}, {Standing::kResponding, t - seconds(50)}}), 1u);
  // Among connections that never completed a request, the oldest goes.
  EXPECT_EQ(choose_eviction({{Standing::kNoRequestYet, t}, {Standing::kNoRequestYet, t - seconds(5)},
                             {Standing::kNoRequestYet, t - seconds(1)}}),
            1u);
  // A kept-alive scraper idle for a long time stays while any connection without a request
  // is there, however recent.
  EXPECT_EQ(choose_eviction({{Standing::kIdle, t - seconds(60)}, {Standing::kNoRequestYet, t}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kPartialHead, t - seconds(60)}, {Standing::kIdle, t}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kNoRequestYet, t - seconds(60)}, {Standing::kClosing, t}}), 1u);
  EXPECT_EQ(choose_eviction({{Standing::kResponding, t - seconds(60)}, {Standing::kPartialHead, t}}), 1u);
}

TEST(ServerLimits, CapIsAQuarterOfTheDescriptorLimitAtMost) {
  EXPECT_EQ(connection_cap(512, 1024), 256u);
  EXPECT_EQ(connection_cap(512, 1u << 20), 512u);
  EXPECT_EQ(connection_cap(512, 20), 16u);
}

}  // namespace
}  // namespace memdiag::http
