// SPDX-License-Identifier: Apache-2.0
// The status page at / and /api/v1/history on the wire: the page is one small constant document
// with nothing external, served with a Content-Security-Policy whose hashes are those of its own
// script and style (SHA-256 and base64 checked against their standards' vectors), and its
// script never parses data as markup. The page in a browser: tests/e2e/test_status_page.py.
#include "daemon/http/status_page.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "daemon/http/csp_hash.hpp"
#include "daemon/http/endpoints.hpp"

namespace memdiag::http {
namespace {

std::string hex(const std::array<std::uint8_t, 32>& digest) {
  std::string out;
  for (std::uint8_t b : digest) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", b);
    out += two;
  }
  return out;
}

TEST(CspHash, Sha256OfFips180Vectors) {
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1'000'000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Around the padding's edges: 55 bytes pad into one block, 56 need a second, 64 are one whole.
  EXPECT_EQ(hex(sha256(std::string(55, 'a'))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hex(sha256(std::string(56, 'a'))), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(hex(sha256(std::string(64, 'a'))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(hex(sha256(std::string(119, 'a'))), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST(CspHash, Base64OfRfc4648VectorsAndTheCspSpecExample) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64(std::string("\xff\xfe\x00", 3)), "//4A");
  EXPECT_EQ(csp_hash_source("alert('Hello, world.');"), "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='");
}

// The text between `open` and the `close` after it.
std::string between(const std::string& text, std::string_view open, std::string_view close) {
  const std::size_t start = text.find(open);
  if (start == std::string::npos) return {};
  const std::size_t end = text.find(close, start + open.size());
  if (end == std::string::npos) return {};
  return text.substr(start + open.size(), end - start - open.size());
}

TEST(StatusPage, SmallSelfContainedAndItsPolicyHashesItsOwnScriptAndStyle) {
  const StatusPage& page = status_page();
  const std::string& doc = *page.document;
  EXPECT_LT(doc.size(), 30u * 1024);
  EXPECT_EQ(doc.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(doc.find("<meta name=\"viewport\""), std::string::npos);  // readable on a phone
  const std::string script = between(doc, "<script>", "</script>");
  const std::string style = between(doc, "<style>", "</style>");
  ASSERT_FALSE(script.empty());
  ASSERT_FALSE(style.empty());
  EXPECT_EQ(doc.find("<script", doc.find("<script>") + 1), std::string::npos);  // one script, inline
  EXPECT_NE(page.content_security_policy.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.content_security_policy.find("script-src " + csp_hash_source(script) + ";"), std::string::npos)
      << page.content_security_policy;
  EXPECT_NE(page.content_security_policy.find("style-src " + csp_hash_source(style) + ";"), std::string::npos)
      << page.content_security_policy;
  EXPECT_NE(page.content_security_policy.find("connect-src 'self'"), std::string::npos);
  // Nothing external: the only absolute URL is the SVG namespace, every link is the daemon's.
  for (std::size_t at = doc.find("http"); at != std::string::npos; at = doc.find("http", at + 1)) {
    if (doc.compare(at, 7, "http://") == 0 || doc.compare(at, 8, "https://") == 0) {
      EXPECT_EQ(doc.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << doc.substr(at, 40);
    }
  }
  for (std::size_t at = doc.find("href=\""); at != std::string::npos; at = doc.find("href=\"", at + 1)) {
    const char first = doc[at + 6];
    EXPECT_TRUE(first == '/' || doc.compare(at + 6, 5, "data:") == 0) << doc.substr(at, 40);
  }
  EXPECT_EQ(doc.find(" src="), std::string::npos);
  // Data goes in as text, never as markup.
  for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function("}) {
    EXPECT_EQ(script.find(sink), std::string::npos) << sink;
  }
  for (const char* id : {"id=\"stall-level\"", "id=\"stall-reasons\"", "id=\"overcommit-level\"", "id=\"contributors\"",
                         "id=\"victims\"", "id=\"chart-psi\"", "id=\"chart-memory\""}) {
    EXPECT_NE(doc.find(id), std::string::npos) << id;
  }
}

RequestHead get(std::string_view text) {
  auto head = parse_request_head(text);
  EXPECT_TRUE(head);
  return *head;
}

struct PageEndpoints : ::testing::Test {
  int histories = 0;
  Handlers handlers{[] { return std::make_shared<const std::string>("m 1\n"); },
                    [] { return true; },
                    {},
                    [this] {
                      ++histories;
                      return std::make_shared<const std::string>("{\"schema\":\"memdiag.history/v1\"}\n");
                    }};
};

TEST_F(PageEndpoints, TheStatusPageWithItsPolicyShared) {
  const WireResponse r = respond(get("GET / HTTP/1.1\r\n\r\n"), handlers);
  EXPECT_EQ(r.head.rfind("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n", 0), 0u) << r.head;
  EXPECT_NE(r.head.find("Content-Security-Policy: " + status_page().content_security_policy + "\r\n"),
            std::string::npos)
      << r.head;
  EXPECT_EQ(r.body.get(), status_page().document.get());  // one document for every client
  const WireResponse head = respond(get("HEAD / HTTP/1.1\r\n\r\n"), handlers);
  EXPECT_EQ(head.body, nullptr);
  EXPECT_NE(head.head.find("Content-Length: " + std::to_string(status_page().document->size()) + "\r\n"),
            std::string::npos);
  // Other responses carry no policy.
  EXPECT_EQ(respond(get("GET /metrics HTTP/1.1\r\n\r\n"), handlers).head.find("Content-Security-Policy"),
            std::string::npos);
}

TEST_F(PageEndpoints, HistoryIsJsonTakesNoParametersAndIsAbsentWithoutAHandler) {
  WireResponse r = respond(get("GET /api/v1/history HTTP/1.1\r\n\r\n"), handlers);
  EXPECT_EQ(r.bytes().rfind("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", 0), 0u) << r.bytes();
  EXPECT_NE(r.bytes().find("\r\n\r\n{\"schema\":\"memdiag.history/v1\"}\n"), std::string::npos);
  EXPECT_EQ(histories, 1);
  r = respond(get("GET /api/v1/history?since=5m HTTP/1.1\r\n\r\n"), handlers);
  EXPECT_EQ(r.bytes().substr(0, 13), "HTTP/1.1 400 ");
  EXPECT_EQ(histories, 1);
  handlers.history = {};
  EXPECT_EQ(respond(get("GET /api/v1/history HTTP/1.1\r\n\r\n"), handlers).bytes().substr(0, 13), "HTTP/1.1 404 ");
}

}  // namespace
}  // namespace memdiag::http
