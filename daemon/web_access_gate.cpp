// SPDX-License-Identifier: Apache-2.0
#include "daemon/web_access_gate.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <spdlog/spdlog.h>

#include <cctype>
#include <map>
#include <mutex>
#include <string>

#include "daemon/http/basic_credentials.hpp"
#include "daemon/http/bcrypt_check.hpp"
#include "daemon/http/credential_cache.hpp"
#include "daemon/http/password_verifier.hpp"
#include "daemon/http/socket_stream.hpp"
#include "daemon/http/tls_stream.hpp"

namespace memdiag {
namespace {

using namespace memdiag::http;

// Checks waiting or running at once: at ~70 ms each (cost 10), a request queued last is
// answered within ~1 s, well inside its head deadline; beyond it, 503 at once.
constexpr std::size_t kQueuedChecks = 16;
// Right credentials remembered: a few scrapers and people per daemon.
constexpr std::size_t kCachedCredentials = 64;

// The hash of the highest bcrypt cost ("$2y$12$..." is 12); the first of them when several.
const std::string& costliest_hash(const std::map<std::string, std::string, std::less<>>& users) {
  auto cost = [](const std::string& hash) {
    // "$2y$" two digits "$": anything else sorts first (the loader refused it anyway).
    if (hash.size() < 7 || hash[3] != '$' || !std::isdigit(static_cast<unsigned char>(hash[4])) ||
        !std::isdigit(static_cast<unsigned char>(hash[5]))) {
      return -1;
    }
    return (hash[4] - '0') * 10 + (hash[5] - '0');
  };
  auto costliest = users.begin();
  for (auto it = users.begin(); it != users.end(); ++it) {
    if (cost(it->second) > cost(costliest->second)) costliest = it;
  }
  return costliest->second;
}

class WebAccessGate final : public AccessGate {
 public:
  explicit WebAccessGate(std::shared_ptr<WebConfigWatcher> watcher)
      : watcher_(std::move(watcher)),
        verifier_(kQueuedChecks, bcrypt_matches, [this] { wake_loop(); }),
        cache_(kCachedCredentials) {}

  std::unique_ptr<ByteStream> open(UniqueSocket socket) override {
    const auto security = watcher_->current();
    if (security && security->tls) {
      auto stream = TlsStream::accept(std::move(socket), security->tls);
      if (!stream) spdlog::warn("HTTP: cannot set up TLS for a connection (out of memory?): dropping it");
      return stream;
    }
    return std::make_unique<SocketStream>(std::move(socket));
  }

  Admission admit(const RequestHead& head, ConnectionTicket ticket, std::optional<bool> verdict) override {
    const auto security = watcher_->current();
    if (!security || security->config.users.empty()) return {};
    // The answer to HEAD has the head of the answer to GET, without its body.
    const bool head_only = head.method == "HEAD";
    // A refusal closes the connection where an answer would (endpoints.cpp's respond()): a
    // request with a body (never read) or without keep-alive. Kept open, the unread body would
    // be parsed as the next request.
    const bool close = !head.keep_alive || head.has_body;
    if (verdict) return *verdict ? Admission{} : unauthorized(head_only, close);
    const auto field = head.field("Authorization");
    auto credentials = field ? parse_basic_credentials(*field) : std::nullopt;
    if (!credentials) return unauthorized(head_only, close);
    const auto& users = security->config.users;
    const auto user = users.find(credentials->user);
    PasswordCheck check;
    check.ticket = ticket;
    check.known_user = user != users.end();
    // An unknown user is checked against a real user's hash all the same (and never granted),
    // the costliest one, so how long a 401 takes does not say whether the user exists (unless
    // users' hashes differ in cost: a cheaper known user's 401 is quicker).
    check.key = {credentials->user, digest(credentials->user, credentials->password),
                 check.known_user ? user->second : costliest_hash(users)};
    if (check.known_user && cache_.contains(check.key)) return {};
    check.password = std::move(credentials->password);
    if (!verifier_.submit(std::move(check))) {
      if (!said_busy_) {
        spdlog::warn("HTTP: {} password checks already waiting: answering 503 until they are done (a client guessing "
                     "passwords?)",
                     kQueuedChecks);
        said_busy_ = true;
      }
      Admission busy{Admission::Decision::kRefuse,
                     text_response({.status = 503, .close = close}, "too many password checks at once; retry\n",
                                   head_only)};
      add_header_field(busy.refusal, "Retry-After: 1\r\n");
      return busy;
    }
    return {Admission::Decision::kPending, {}};
  }

  std::uint64_t stream_generation() override {
    const auto security = watcher_->current();
    if (security.get() != policy_of_.get()) {
      std::string policy = stream_policy(security.get());
      if (policy != policy_) {
        policy_ = std::move(policy);
        ++stream_generation_;
      }
      policy_of_ = security;
    }
    return stream_generation_;
  }

  void add_fields(WireResponse& response) override {
    const auto security = watcher_->current();
    if (!security || security->config.headers.empty()) return;
    std::string fields;
    for (const auto& [name, value] : security->config.headers) {
      // An endpoint's own field wins (the status page's Content-Security-Policy, which its
      // inline script needs), as a handler's own header does under the toolkit.
      if (response.head.find("\r\n" + name + ": ") != std::string::npos) continue;
      fields += name + ": " + value + "\r\n";
    }
    add_header_field(response, fields);
  }

  std::vector<Verdict> take_verdicts() override {
    std::vector<Verdict> verdicts;
    for (CheckedPassword& checked : verifier_.take_results()) {
      if (checked.granted) cache_.add(std::move(checked.key));
      verdicts.push_back({checked.ticket, checked.granted});
    }
    return verdicts;
  }

  void refresh() override { watcher_->current(); }

  void set_wake(std::function<void()> wake) override {
    std::lock_guard lock(wake_mutex_);
    wake_ = std::move(wake);
  }

 private:
  static Admission unauthorized(bool head_only, bool close) {
    Admission refused{Admission::Decision::kRefuse,
                      text_response({.status = 401, .close = close}, "Unauthorized\n", head_only)};
    add_header_field(refused.refusal, "WWW-Authenticate: Basic\r\n");
    return refused;
  }

  // What open() does with a new connection under `security`, as text to compare.
  static std::string stream_policy(const WebSecurity* security) {
    if (security == nullptr || !security->tls) return "plain";
    const TlsServerSettings& tls = security->config.tls;
    std::string policy = "tls " + std::to_string(static_cast<int>(tls.client_auth)) + " " +
                         std::to_string(static_cast<int>(tls.min_version)) + " " +
                         std::to_string(static_cast<int>(tls.max_version)) + " ca=" + tls.client_ca_file;
    for (const auto& san : tls.client_allowed_sans) policy += " san=" + san;
    for (const auto& cipher : tls.cipher_suites) policy += " cipher=" + cipher;
    return policy;
  }

  // A keyed digest, so that what the cache holds is no unsalted hash of a password to search
  // offline from a copy of the daemon's memory. The key is made at the first use: a daemon
  // without basic auth makes none.
  PasswordDigest digest(const std::string& user, const std::string& password) {
    if (!digest_key_made_) {
      if (RAND_bytes(digest_key_.data(), static_cast<int>(digest_key_.size())) != 1) {
        spdlog::warn("HTTP: no random bytes for the credential cache's key; using a fixed one");
      }
      digest_key_made_ = true;
    }
    std::string material = user;
    material.push_back('\0');  // "ab"+"c" and "a"+"bc" differ
    material += password;
    PasswordDigest out{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), digest_key_.data(), static_cast<int>(digest_key_.size()),
         reinterpret_cast<const unsigned char*>(material.data()), material.size(), out.data(), &length);
    OPENSSL_cleanse(material.data(), material.size());
    return out;
  }

  void wake_loop() {
    std::lock_guard lock(wake_mutex_);
    if (wake_) wake_();
  }

  std::shared_ptr<WebConfigWatcher> watcher_;
  // The loop thread's only: the config stream_generation() last looked at, and its policy.
  std::shared_ptr<const WebSecurity> policy_of_;
  std::string policy_ = "plain";
  std::uint64_t stream_generation_ = 0;
  std::mutex wake_mutex_;
  std::function<void()> wake_;
  PasswordVerifier verifier_;  // after wake_: its thread calls wake_loop until it is destroyed
  CredentialCache cache_;      // the loop thread's alone
  std::array<unsigned char, 32> digest_key_{};
  bool digest_key_made_ = false;
  bool said_busy_ = false;
};

}  // namespace

std::shared_ptr<AccessGate> make_access_gate(std::shared_ptr<WebConfigWatcher> watcher) {
  return std::make_shared<WebAccessGate>(std::move(watcher));
}

}  // namespace memdiag
