// SPDX-License-Identifier: Apache-2.0
// /metrics gzipped for the scrapers that ask: Accept-Encoding read as RFC 9110 says, the
// compressed body a gzip stream of the exposition, made once per exposition, and the endpoint's
// head saying what it sent.
#include "daemon/http/content_coding.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <memory>
#include <string>

#include "daemon/http/endpoints.hpp"
#include "daemon/http/gzip_cache.hpp"

namespace memdiag::http {
namespace {

std::string gunzip(std::string_view data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

TEST(ContentCoding, AcceptEncoding) {
  // What Prometheus sends, and the usual spellings.
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("gzip, deflate, br"));
  EXPECT_TRUE(accepts_gzip("deflate , GZip;q=0.5"));
  EXPECT_TRUE(accepts_gzip("x-gzip"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_TRUE(accepts_gzip("identity;q=0.5, *;q=0.1"));
  // Refused, or not offered.
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip("deflate, br"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip; q=0.000"));
  EXPECT_FALSE(accepts_gzip("*;q=0"));
  EXPECT_FALSE(accepts_gzip("*, gzip;q=0"));  // gzip named decides over "*"
  EXPECT_FALSE(accepts_gzip("gzip;q=2"));     // malformed q: refused, not guessed
  EXPECT_FALSE(accepts_gzip("gzip;q=abc"));
  EXPECT_FALSE(accepts_gzip("gzipped"));
}

TEST(ContentCoding, GzipRoundTripsAndShrinksAnExposition) {
  std::string exposition;
  for (int i = 0; i < 2000; ++i) {
    exposition += "memdiag_cgroup_memory_usage_bytes{cgroup=\"/kubepods.slice/pod" + std::to_string(i) + "\"} " +
                  std::to_string(i * 4096) + "\n";
  }
  auto compressed = gzip(exposition);
  ASSERT_TRUE(compressed) << compressed.error().message;
  EXPECT_EQ(gunzip(*compressed), exposition);
  EXPECT_LT(compressed->size(), exposition.size() / 5);
  auto empty = gzip("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(gunzip(*empty), "");
}

TEST(ContentCoding, EachExpositionIsCompressedOnce) {
  GzipCache cache;
  auto first = std::make_shared<const std::string>("a 1\n");
  auto compressed = cache.of(first);
  ASSERT_NE(compressed, nullptr);
  EXPECT_EQ(cache.of(first).get(), compressed.get());  // the same buffer for every scraper
  auto second = std::make_shared<const std::string>("a 2\n");
  auto recompressed = cache.of(second);
  EXPECT_NE(recompressed.get(), compressed.get());
  EXPECT_EQ(gunzip(*recompressed), "a 2\n");
  EXPECT_EQ(cache.of(nullptr), nullptr);
}

TEST(ContentCoding, MetricsEndpointSendsGzipToWhoAsks) {
  auto exposition = std::make_shared<const std::string>("memdiag_up 1\n");
  GzipCache cache;
  Handlers handlers{[&] { return exposition; }, [] { return true; }, {}};
  handlers.metrics_gzip = [&] { return cache.of(exposition); };
  auto head = [](std::string_view text) { return *parse_request_head(text); };

  std::string text = respond(head("GET /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n"), handlers).bytes();
  const auto end = text.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_NE(text.find("Content-Encoding: gzip\r\n"), std::string::npos);
  EXPECT_NE(text.find("Vary: Accept-Encoding\r\n"), std::string::npos);
  const std::string body = text.substr(end + 4);
  EXPECT_NE(text.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos);
  EXPECT_EQ(gunzip(body), "memdiag_up 1\n");

  text = respond(head("GET /metrics HTTP/1.1\r\n\r\n"), handlers).bytes();
  EXPECT_EQ(text.find("Content-Encoding"), std::string::npos);
  EXPECT_NE(text.find("Vary: Accept-Encoding\r\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 13), "memdiag_up 1\n");

  // Without a gzip handler (Windows), everyone gets the text.
  handlers.metrics_gzip = {};
  text = respond(head("GET /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n"), handlers).bytes();
  EXPECT_EQ(text.find("Content-Encoding"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 13), "memdiag_up 1\n");
}

}  // namespace
}  // namespace memdiag::http
