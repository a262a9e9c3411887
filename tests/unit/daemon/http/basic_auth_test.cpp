// SPDX-License-Identifier: Apache-2.0
// Basic auth's parts: the Authorization field's credentials, bcrypt checks with libxcrypt, the
// cache of right credentials, and the bounded worker that checks passwords off the loop.
#include <crypt.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "daemon/http/basic_credentials.hpp"
#include "daemon/http/bcrypt_check.hpp"
#include "daemon/http/credential_cache.hpp"
#include "daemon/http/password_verifier.hpp"

namespace memdiag::http {
namespace {

using namespace std::chrono_literals;

TEST(BasicCredentials, DecodesUserAndPasswordUpToTheFirstColon) {
  auto c = parse_basic_credentials("Basic cHJvbWV0aGV1czpzM2NyZXQ6d2l0aDpjb2xvbnM=");  // prometheus:s3cret:with:colons
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "prometheus");
  EXPECT_EQ(c->password, "s3cret:with:colons");
  c = parse_basic_credentials("basic YTpi");  // the scheme is case-insensitive; "a:b", no padding needed
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "a");
  EXPECT_EQ(c->password, "b");
  c = parse_basic_credentials("Basic Og==");  // ":" - empty user and password
  ASSERT_TRUE(c);
  EXPECT_EQ(c->user, "");
  c = parse_basic_credentials("Basic YWI6Yw==");  // "ab:c"
  ASSERT_TRUE(c);
  EXPECT_EQ(c->password, "c");
}

TEST(BasicCredentials, RefusesOtherSchemesAndMalformedTokens) {
  EXPECT_FALSE(parse_basic_credentials("Bearer YTpi"));
  EXPECT_FALSE(parse_basic_credentials("Basic"));
  EXPECT_FALSE(parse_basic_credentials("Basic YWJj"));      // "abc": no colon
  EXPECT_FALSE(parse_basic_credentials("Basic YTpi="));     // bad length
  EXPECT_FALSE(parse_basic_credentials("Basic Y=pi"));      // padding inside
  EXPECT_FALSE(parse_basic_credentials("Basic YT!i"));      // not base64
  EXPECT_FALSE(parse_basic_credentials("Basic ===="));
}

std::string bcrypt_hash(const char* password, const char* prefix = "$2b$") {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn(prefix, 4, nullptr, 0, salt, sizeof salt), nullptr);  // cost 4: fast
  crypt_data data{};
  const char* hash = crypt_rn(password, salt, &data, sizeof data);
  EXPECT_NE(hash, nullptr);
  return hash == nullptr ? "" : hash;
}

TEST(BcryptCheck, MatchesTheRightPasswordOnlyWhateverTheVariant) {
  const std::string hash = bcrypt_hash("s3cret");
  EXPECT_TRUE(bcrypt_matches("s3cret", hash));
  EXPECT_FALSE(bcrypt_matches("s3cret ", hash));
  EXPECT_FALSE(bcrypt_matches("", hash));
  // $2y$ (htpasswd's) and $2a$ are the same algorithm for such passwords.
  std::string y = hash;
  y[2] = 'y';
  EXPECT_TRUE(bcrypt_matches("s3cret", y));
  EXPECT_FALSE(bcrypt_matches("s3cret", "$2b$04$notahashatall"));
}

TEST(BcryptCheck, RefusesWhatBcryptWouldTruncate) {
  const std::string long_password(72, 'p');
  const std::string hash = bcrypt_hash(long_password.c_str());
  EXPECT_TRUE(bcrypt_matches(long_password, hash));
  EXPECT_FALSE(bcrypt_matches(long_password + "extra", hash));  // libxcrypt alone would say yes
  EXPECT_FALSE(bcrypt_matches(std::string("s3cret\0x", 8), bcrypt_hash("s3cret")));
}

CredentialKey key(const std::string& user, unsigned char d, const std::string& hash = "h") {
  CredentialKey k{user, {}, hash};
  k.digest.fill(d);
  return k;
}

TEST(CredentialCache, RemembersWhatWasAddedUpToItsCapacityLeastRecentFirstOut) {
  CredentialCache cache(2);
  cache.add(key("a", 1));
  cache.add(key("b", 2));
  EXPECT_TRUE(cache.contains(key("a", 1)));  // a is now the most recent
  cache.add(key("c", 3));                    // pushes b out
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.contains(key("a", 1)));
  EXPECT_FALSE(cache.contains(key("b", 2)));
  EXPECT_TRUE(cache.contains(key("c", 3)));
}

TEST(CredentialCache, AnotherPasswordOrANewHashForTheUserMisses) {
  CredentialCache cache(4);
  cache.add(key("a", 1, "old"));
  EXPECT_FALSE(cache.contains(key("a", 2, "old")));
  EXPECT_FALSE(cache.contains(key("a", 1, "new")));  // the web config gave the user a new hash
  EXPECT_FALSE(cache.contains(key("b", 1, "old")));
}

// A stand-in for bcrypt that blocks until released, so the queue's bound can be seen.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void release() {
    {
      std::lock_guard l(m);
      open = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock l(m);
    cv.wait(l, [this] { return open; });
  }
};

PasswordCheck check(std::uint64_t serial, const std::string& password, const std::string& hash, bool known = true) {
  PasswordCheck c;
  c.ticket = {static_cast<NativeSocket>(serial), serial};
  c.password = password;
  c.key = key("u", 1, hash);
  c.known_user = known;
  return c;
}

TEST(PasswordVerifier, ChecksOffTheCallersThreadAndSaysWhenAResultIsReady) {
  Gate gate;
  std::atomic<int> told{0};
  PasswordVerifier verifier(
      2,
      [&](std::string_view password, const std::string& hash) {
        gate.wait();
        return password == hash;
      },
      [&] { ++told; });
  EXPECT_TRUE(verifier.submit(check(1, "right", "right")));
  EXPECT_TRUE(verifier.submit(check(2, "wrong", "right")));
  // Two waiting or running: the bound. The caller answers 503 instead of queueing more.
  EXPECT_FALSE(verifier.submit(check(3, "right", "right")));
  EXPECT_TRUE(verifier.take_results().empty());  // nothing is decided while bcrypt runs
  gate.release();
  std::vector<CheckedPassword> results;
  for (int i = 0; i < 200 && results.size() < 2; ++i) {
    for (auto& r : verifier.take_results()) results.push_back(std::move(r));
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(told.load(), 2);
  EXPECT_EQ(results[0].ticket.serial, 1u);
  EXPECT_TRUE(results[0].granted);
  EXPECT_EQ(results[0].key.hash, "right");
  EXPECT_FALSE(results[1].granted);
  EXPECT_TRUE(verifier.submit(check(4, "x", "y")));  // room again
}

TEST(PasswordVerifier, AnUnknownUserIsCheckedButNeverGranted) {
  std::atomic<int> checked{0};
  PasswordVerifier verifier(
      4, [&](std::string_view, const std::string&) { return ++checked, true; }, [] {});
  ASSERT_TRUE(verifier.submit(check(1, "p", "h", /*known=*/false)));
  std::vector<CheckedPassword> results;
  for (int i = 0; i < 200 && results.empty(); ++i) {
    results = verifier.take_results();
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(checked.load(), 1);  // the same work as for a real user: timing does not tell
  EXPECT_FALSE(results[0].granted);
}

}  // namespace
}  // namespace memdiag::http
