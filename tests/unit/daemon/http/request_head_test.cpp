// SPDX-License-Identifier: Apache-2.0
// The request-head parser on what Prometheus, curl and browsers send, and on what they do not:
// truncated, garbage, oversized, smuggling-shaped input. Every refusal carries its status.
#include "daemon/http/request_head.hpp"

#include <gtest/gtest.h>

#include <string>

namespace memdiag::http {
namespace {

// What Prometheus 2.x sends for a scrape (its User-Agent shortened).
constexpr std::string_view kPrometheusScrape =
    "GET /metrics HTTP/1.1\r\n"
    "Host: 127.0.0.1:9842\r\n"
    "User-Agent: Prometheus/2.45.3\r\n"
    "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
    "Accept-Encoding: gzip\r\n"
    "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n"
    "\r\n";

TEST(FindHeadEnd, FindsTheBlankLineWithCrlfOrBareLf) {
  EXPECT_EQ(find_head_end(kPrometheusScrape), kPrometheusScrape.size());
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\n\n"), 16u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\n\r\nGET /next"), 18u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: a\r\n"), std::string_view::npos);
  EXPECT_EQ(find_head_end(""), std::string_view::npos);
  EXPECT_EQ(find_head_end("\r"), std::string_view::npos);
}

TEST(FindHeadEnd, ByteByByteFindsTheSameEndAsAllAtOnce) {
  // The loop scans only what is new each time; a blank line split across reads must be found.
  const std::string_view all = kPrometheusScrape;
  std::size_t scanned = 0;
  std::size_t found = std::string_view::npos;
  for (std::size_t n = 1; n <= all.size() && found == std::string_view::npos; ++n) {
    found = find_head_end(all.substr(0, n), scanned);
    scanned = n;
  }
  EXPECT_EQ(found, all.size());
}

TEST(ParseRequestHead, PrometheusScrape) {
  auto head = parse_request_head(kPrometheusScrape);
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->method, "GET");
  EXPECT_EQ(head->target, "/metrics");
  EXPECT_EQ(head->path, "/metrics");
  EXPECT_EQ(head->minor_version, 1);
  EXPECT_TRUE(head->keep_alive);
  EXPECT_FALSE(head->has_body);
  EXPECT_EQ(head->fields.size(), 5u);
  EXPECT_EQ(head->field("host"), "127.0.0.1:9842");
  EXPECT_EQ(head->field("X-PROMETHEUS-SCRAPE-TIMEOUT-SECONDS"), "10");
  EXPECT_FALSE(head->field("Authorization"));
}

TEST(ParseRequestHead, KeepAliveFollowsVersionAndConnection) {
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")->keep_alive);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\nConnection: Upgrade, CLOSE\r\n\r\n")->keep_alive);
  EXPECT_FALSE(parse_request_head("GET / HTTP/1.0\r\n\r\n")->keep_alive);
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")->keep_alive);
  EXPECT_TRUE(parse_request_head("GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n")->keep_alive);
}

TEST(ParseRequestHead, PathsOfEveryTargetForm) {
  EXPECT_EQ(parse_request_head("GET /metrics?name[]=x HTTP/1.1\r\n\r\n")->path, "/metrics");
  EXPECT_EQ(parse_request_head("GET /healthz#frag HTTP/1.1\r\n\r\n")->path, "/healthz");
  EXPECT_EQ(parse_request_head("GET http://node:9842/metrics HTTP/1.1\r\n\r\n")->path, "/metrics");
  EXPECT_EQ(parse_request_head("GET http://node:9842 HTTP/1.1\r\n\r\n")->path, "/");
  EXPECT_EQ(parse_request_head("OPTIONS * HTTP/1.1\r\n\r\n")->path, "*");
  EXPECT_EQ(parse_request_head("GET metrics HTTP/1.1\r\n\r\n").error().status, 400);
}

TEST(ParseRequestHead, LeadingEmptyLinesAndBareLf) {
  auto head = parse_request_head("\r\n\nGET /healthz HTTP/1.1\nHost: a\n\n");
  ASSERT_TRUE(head) << head.error().message;
  EXPECT_EQ(head->path, "/healthz");
  EXPECT_EQ(head->field("Host"), "a");
}

TEST(ParseRequestHead, FieldValuesAreTrimmed) {
  auto head = parse_request_head("GET / HTTP/1.1\r\nHost:\t a b \t\r\nEmpty:\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->field("host"), "a b");
  EXPECT_EQ(head->field("empty"), "");
}

TEST(ParseRequestHead, BodiesAreNoticed) {
  EXPECT_TRUE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n")->has_body);
  EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")->has_body);
  EXPECT_TRUE(parse_request_head("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")->has_body);
  EXPECT_EQ(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n").error().status, 400);
  EXPECT_EQ(parse_request_head("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").error().status, 400);
  EXPECT_EQ(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n").error().status,
            400);
}

TEST(ParseRequestHead, RefusesMalformedHeadsWith400) {
  for (std::string_view bad : {
           std::string_view(""),
           std::string_view("\r\n\r\n"),
           std::string_view("GET\r\n\r\n"),
           std::string_view("GET /\r\n\r\n"),
           std::string_view("GET  / HTTP/1.1\r\n\r\n"),         // two spaces
           std::string_view("GET / HTTP/1.1 \r\n\r\n"),         // trailing space in the version
           std::string_view("G(T / HTTP/1.1\r\n\r\n"),          // not a token
           std::string_view("GET /a\tb HTTP/1.1\r\n\r\n"),      // control character in the target
           std::string_view("GET / HTTP/1.x\r\n\r\n"),
           std::string_view("GET / http/1.1\r\n\r\n"),
           std::string_view("GET / HTTP/1.1\r\nHost a\r\n\r\n"),  // no colon
           std::string_view("GET / HTTP/1.1\r\nHost : a\r\n\r\n"),  // space before the colon
           std::string_view("GET / HTTP/1.1\r\n: a\r\n\r\n"),       // empty name
           std::string_view("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"),  // obsolete folding
           std::string_view("GET / HTTP/1.1\r\nA: b\x01\r\n\r\n"),  // control character in a value
           std::string_view("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"),  // a TLS hello
       }) {
    auto head = parse_request_head(bad);
    ASSERT_FALSE(head) << bad;
    EXPECT_EQ(head.error().status, 400) << bad;
    EXPECT_FALSE(head.error().message.empty()) << bad;
  }
}

TEST(ParseRequestHead, ALaterMinorVersionIsHttp11) {
  EXPECT_EQ(parse_request_head("GET / HTTP/1.3\r\n\r\n")->minor_version, 1);
}

TEST(ParseRequestHead, RefusesOtherHttpVersionsWith505) {
  EXPECT_EQ(parse_request_head("GET / HTTP/2.0\r\n\r\n").error().status, 505);
  EXPECT_EQ(parse_request_head("GET / HTTP/0.9\r\n\r\n").error().status, 505);
}

TEST(ParseRequestHead, RefusesTooManyFieldsWith431) {
  std::string head = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i < kMaxHeaderFields; ++i) head += "A: b\r\n";
  EXPECT_TRUE(parse_request_head(head + "\r\n"));
  auto refused = parse_request_head(head + "One: more\r\n\r\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, 431);
}

TEST(ParseRequestHead, TruncatedHeadsParseWhatIsThereOrRefuse) {
  // The server parses only once find_head_end found the end; cut anywhere, the parser still
  // never reads past its input (ASan) and either accepts or says why not.
  const std::string_view all = kPrometheusScrape;
  for (std::size_t n = 0; n < all.size(); ++n) {
    auto head = parse_request_head(all.substr(0, n));
    if (!head) {
      EXPECT_FALSE(head.error().message.empty()) << n;
    }
  }
}

TEST(ParseRequestHead, HugeInputIsParsedInOnePass) {
  std::string head = "GET /" + std::string(1 << 20, 'a') + " HTTP/1.1\r\nX: " + std::string(1 << 20, 'b') + "\r\n\r\n";
  auto parsed = parse_request_head(head);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->path.size(), (1u << 20) + 1);
  EXPECT_EQ(parsed->field("x")->size(), 1u << 20);
}

}  // namespace
}  // namespace memdiag::http
