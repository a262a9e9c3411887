// SPDX-License-Identifier: Apache-2.0
// The web config (--web.config.file): the exporter-toolkit's format parsed into WebConfig, every
// refusal with its file, line, key and reason, paths relative to the file's directory, and
// loading it whole (certificates and keys read and checked) with load_web_security.
#include <gtest/gtest.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/cli.hpp"
#include "daemon/config.hpp"
#include "daemon/http/response.hpp"
#include "daemon/web_config.hpp"
#include "daemon/web_security.hpp"

namespace memdiag {
namespace {

// A user whose hash is of the right form (the daemon checks it against passwords; here only
// its form matters).
constexpr const char* kHash = "$2b$10$abcdefghijklmnopqrstuuJ0123456789ABCDEFGHIJKLMNOPQRSa";

ConfigError refusal(std::string_view yaml, const std::string& file = "/etc/memdiag/web.yml") {
  auto parsed = parse_web_config(yaml, file);
  EXPECT_FALSE(parsed) << "accepted:\n" << yaml;
  return parsed ? ConfigError{} : parsed.error();
}

TEST(WebConfig, EmptyFileMeansNoTlsNoAuthNoHeaders) {
  auto config = parse_web_config("", "web.yml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_FALSE(config->tls_enabled);
  EXPECT_TRUE(config->users.empty());
  EXPECT_TRUE(config->headers.empty());
}

TEST(WebConfig, EverythingTheToolkitDocuments) {
  auto config = parse_web_config(std::string(R"(
tls_server_config:
  cert_file: server.crt
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca/clients.pem
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: false
  client_allowed_sans: [prometheus.example.com, 10.0.0.1]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
    Strict-Transport-Security: max-age=31536000
    X-XSS-Protection: ""
basic_auth_users:
  prometheus: )") + kHash + "\n",
                                 "/etc/memdiag/web.yml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_TRUE(config->tls_enabled);
  // Relative to the web config's directory, as the toolkit resolves them; absolute as written.
  EXPECT_EQ(config->tls.cert_file, "/etc/memdiag/server.crt");
  EXPECT_EQ(config->tls.key_file, "/abs/server.key");
  EXPECT_EQ(config->tls.client_ca_file, "/etc/memdiag/ca/clients.pem");
  EXPECT_EQ(config->tls.client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(config->tls.min_version, TlsVersion::kTls13);
  EXPECT_EQ(config->tls.cipher_suites, std::vector<std::string>{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"});
  EXPECT_EQ(config->tls.curve_preferences, (std::vector<std::string>{"X25519", "P-256"}));
  EXPECT_FALSE(config->tls.prefer_server_cipher_suites);
  EXPECT_EQ(config->tls.client_allowed_sans.size(), 2u);
  EXPECT_FALSE(config->http2);
  // A blank value is unset, as the toolkit reads it.
  ASSERT_EQ(config->headers.size(), 3u);
  EXPECT_EQ(config->headers[0], (std::pair<std::string, std::string>{"X-Frame-Options", "deny"}));
  EXPECT_EQ(config->users.at("prometheus"), kHash);
  EXPECT_EQ(config->line_of("tls_server_config.cert_file"), 3);
  EXPECT_EQ(config->named_files(),
            (std::vector<std::string>{"/etc/memdiag/server.crt", "/abs/server.key", "/etc/memdiag/ca/clients.pem"}));
}

TEST(WebConfig, AFileNamedWithoutADirectoryKeepsItsPathsAsWritten) {
  auto config = parse_web_config("tls_server_config: {cert_file: a.crt, key_file: a.key}\n", "web.yml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->tls.cert_file, "a.crt");  // relative to the working directory, like the file itself
}

TEST(WebConfig, AuthAndHeadersWithoutTlsArePlainHttp) {
  auto config = parse_web_config(std::string("basic_auth_users:\n  alice: ") + kHash + "\n", "web.yml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_FALSE(config->tls_enabled);
  EXPECT_EQ(config->users.size(), 1u);
}

TEST(WebConfig, RefusesUnknownKeysWithLineAndHint) {
  auto e = refusal("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_tpye: NoClientCert\n");
  EXPECT_EQ(e.file, "/etc/memdiag/web.yml");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "tls_server_config.client_auth_tpye");
  EXPECT_NE(e.reason.find("did you mean 'client_auth_type'"), std::string::npos) << e.reason;
  e = refusal("\nbasic_auth_user:\n  a: b\n");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.key, "basic_auth_user");
  EXPECT_EQ(e.to_string().rfind("/etc/memdiag/web.yml:2: basic_auth_user: unknown key", 0), 0u) << e.to_string();
}

TEST(WebConfig, RefusesAnUnknownClientAuthType) {
  auto e = refusal("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyIfYouLike\n");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "tls_server_config.client_auth_type");
  EXPECT_NE(e.reason.find("RequireAndVerifyClientCert"), std::string::npos);
}

TEST(WebConfig, RefusesACertificateWithoutItsKeyAndTheOtherWayRound) {
  auto e = refusal("tls_server_config:\n  cert_file: server.crt\n");
  EXPECT_EQ(e.key, "tls_server_config.key_file");
  EXPECT_EQ(e.line, 2);
  EXPECT_NE(e.reason.find("missing"), std::string::npos);
  e = refusal("tls_server_config:\n  key_file: server.key\n");
  EXPECT_EQ(e.key, "tls_server_config.cert_file");
  EXPECT_EQ(e.line, 1);
  // client_auth_type alone turns TLS on too (the toolkit's IsEnabled), and then it must be whole.
  e = refusal("tls_server_config:\n  client_auth_type: RequireAnyClientCert\n");
  EXPECT_EQ(e.key, "tls_server_config.cert_file");
}

TEST(WebConfig, RefusesHeadersTheToolkitDoesNotLetBeSet) {
  auto e = refusal("http_server_config:\n  headers:\n    X-Frame-Options: deny\n    Server: memdiag\n");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "http_server_config.headers.Server");
  EXPECT_NE(e.reason.find("can not be configured"), std::string::npos);
  EXPECT_NE(e.reason.find("Strict-Transport-Security"), std::string::npos);
  // As spelled: the toolkit's lookup is exact.
  EXPECT_EQ(refusal("http_server_config:\n  headers:\n    x-frame-options: deny\n").key,
            "http_server_config.headers.x-frame-options");
  e = refusal("http_server_config:\n  headers:\n    X-Frame-Options: allow-from x\n");
  EXPECT_NE(e.reason.find("deny or sameorigin"), std::string::npos);
  e = refusal("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n");
  EXPECT_NE(e.reason.find("nosniff"), std::string::npos);
  // No header injection through a value.
  e = refusal("http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nSet-Cookie: x\"\n");
  EXPECT_NE(e.reason.find("line breaks"), std::string::npos);
}

TEST(WebConfig, RefusesClientCertificateSettingsThatCannotWorkTogether) {
  auto e = refusal("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca.pem\n");
  EXPECT_EQ(e.key, "tls_server_config.client_ca_file");
  EXPECT_EQ(e.line, 4);
  EXPECT_NE(e.reason.find("without a client auth policy"), std::string::npos);
  e = refusal("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n");
  EXPECT_EQ(e.key, "tls_server_config.client_ca_file");
  EXPECT_EQ(e.line, 4);
  e = refusal(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequestClientCert\n"
      "  client_allowed_sans: [x]\n");
  EXPECT_EQ(e.key, "tls_server_config.client_allowed_sans");
  EXPECT_EQ(e.line, 5);
  // Nor with a certificate that is required but not verified: anyone can make one with the SAN.
  e = refusal(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAnyClientCert\n"
      "  client_allowed_sans: [x]\n");
  EXPECT_EQ(e.key, "tls_server_config.client_allowed_sans");
  EXPECT_NE(e.reason.find("needs client_auth_type RequireAndVerifyClientCert"), std::string::npos);
}

TEST(WebConfig, RefusesBadVersionsCurvesHashesUsersAndWhatMemdiagdDoesNotDo) {
  EXPECT_EQ(refusal("tls_server_config: {cert_file: a, key_file: b, min_version: TLS14}\n").key,
            "tls_server_config.min_version");
  EXPECT_NE(refusal("tls_server_config: {cert_file: a, key_file: b, min_version: TLS13, max_version: TLS12}\n")
                .reason.find("higher than max_version"),
            std::string::npos);
  EXPECT_EQ(refusal("tls_server_config: {cert_file: a, key_file: b, curve_preferences: [CurveP224]}\n").key,
            "tls_server_config.curve_preferences");
  auto e = refusal("basic_auth_users:\n  alice: secret\n");
  EXPECT_EQ(e.key, "basic_auth_users.alice");
  EXPECT_EQ(e.line, 2);
  EXPECT_NE(e.reason.find("not a bcrypt hash"), std::string::npos);
  EXPECT_EQ(refusal(std::string("basic_auth_users:\n  'a:b': ") + kHash + "\n").key, "basic_auth_users.a:b");
  EXPECT_NE(refusal("rate_limit: {interval: 1s, burst: 5}\n").reason.find("not supported"), std::string::npos);
  EXPECT_NE(refusal("tls_server_config:\n  cert: |\n    -----BEGIN CERTIFICATE-----\n").reason.find("cert_file"),
            std::string::npos);
  EXPECT_EQ(refusal("tls_server_config: [a]\n").key, "tls_server_config");
  EXPECT_EQ(refusal("basic_auth_users: {a: [b]}\n").key, "basic_auth_users.a");
  EXPECT_EQ(refusal("tls_server_config: {cert_file: a\n").key, "<yaml>");
}

TEST(WebConfig, BcryptHashForms) {
  EXPECT_TRUE(is_bcrypt_hash(kHash));
  std::string h = kHash;
  for (const char variant : {'a', 'y'}) {
    h[2] = variant;
    EXPECT_TRUE(is_bcrypt_hash(h)) << h;
  }
  h[2] = 'x';  // crypt_blowfish's buggy-compatibility variant: not what the toolkit takes
  EXPECT_FALSE(is_bcrypt_hash(h));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kHash).replace(4, 2, "03")));  // cost below 4
  EXPECT_FALSE(is_bcrypt_hash(std::string(kHash).replace(4, 2, "32")));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kHash) + "x"));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kHash).replace(20, 1, "!")));
  EXPECT_FALSE(is_bcrypt_hash("$1$abc$def"));
}

// The main config's key and the flag over it.
TEST(WebConfig, TheConfigKeyIsRelativeToTheConfigFileAndTheFlagOverridesIt) {
  auto config = parse_config("web:\n  config_file: web.yml\n", "/etc/memdiag/memdiagd.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->web_config_file, "/etc/memdiag/web.yml");
  EXPECT_TRUE(default_config().web_config_file.empty());  // off by default
  auto options = parse_cli({"--web.config.file", "other.yml"});
  ASSERT_TRUE(options);
  auto overridden = apply_cli_overrides(std::move(config).value(), *options);
  ASSERT_TRUE(overridden);
  EXPECT_EQ(overridden->web_config_file, "other.yml");
  EXPECT_TRUE(parse_cli({"--check-config", "--web.config.file", "w.yml"}));
}

TEST(WebConfig, HeaderFieldsGoAtTheEndOfTheHeadBeforeASmallBody) {
  http::WireResponse r = http::text_response({.status = 401}, "Unauthorized\n");
  http::add_header_field(r, "WWW-Authenticate: Basic\r\nX-Frame-Options: deny\r\n");
  EXPECT_NE(r.head.find("HTTP/1.1 401 Unauthorized\r\n"), std::string::npos);
  EXPECT_NE(r.head.find("\r\nWWW-Authenticate: Basic\r\nX-Frame-Options: deny\r\n\r\nUnauthorized\n"), std::string::npos)
      << r.head;
}

// ---- loading it whole: the files it names ----

struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    char pattern[] = "/tmp/memdiag-web-XXXXXX";
    dir = ::mkdtemp(pattern);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

// A self-signed P-256 certificate and its key, as PEM.
std::pair<std::string, std::string> self_signed(const char* common_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  auto pem = [](auto write) {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
  };
  std::string cert_pem = pem([&](BIO* b) { PEM_write_bio_X509(b, cert); });
  std::string key_pem = pem([&](BIO* b) { PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
  X509_free(cert);
  EVP_PKEY_free(key);
  return {cert_pem, key_pem};
}

TEST(WebSecurity, LoadsCertificatesRelativeToTheWebConfig) {
  Scratch s;
  const auto [cert, key] = self_signed("server");
  s.write("server.crt", cert);
  s.write("server.key", key);
  s.write("ca.pem", self_signed("ca").first);
  const std::string file = s.write("web.yml",
                                   "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                                   "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
                                   "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n"
                                   "  curve_preferences: [CurveP256]\n");
  auto loaded = load_web_security(file);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_NE((*loaded)->tls, nullptr);
}

TEST(WebSecurity, RefusesAnUnreadableCertificateNamingItsLine) {
  Scratch s;
  const std::string file = s.write("web.yml", "# TLS\ntls_server_config:\n  cert_file: missing.crt\n  key_file: k\n");
  auto loaded = load_web_security(file);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().file, file);
  EXPECT_EQ(loaded.error().line, 3);
  EXPECT_EQ(loaded.error().key, "tls_server_config.cert_file");
  EXPECT_NE(loaded.error().reason.find("No such file or directory"), std::string::npos) << loaded.error().reason;
  EXPECT_NE(loaded.error().reason.find((s.dir / "missing.crt").string()), std::string::npos);
}

TEST(WebSecurity, RefusesAKeyOfAnotherCertificateAndCertificatesThatAreNot) {
  Scratch s;
  s.write("server.crt", self_signed("server").first);
  s.write("other.key", self_signed("other").second);
  s.write("junk.pem", "not a certificate\n");
  auto loaded = load_web_security(s.write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n"));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().key, "tls_server_config.key_file");
  EXPECT_EQ(loaded.error().line, 3);
  EXPECT_NE(loaded.error().reason.find("is not the key of the certificate"), std::string::npos) << loaded.error().reason;
  loaded = load_web_security(s.write("web2.yml", "tls_server_config:\n  cert_file: junk.pem\n  key_file: other.key\n"));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().key, "tls_server_config.cert_file");
}

TEST(WebSecurity, RefusesAnUnknownCipherSuiteAndAClientCaFileWithoutCertificates) {
  Scratch s;
  const auto [cert, key] = self_signed("server");
  s.write("server.crt", cert);
  s.write("server.key", key);
  s.write("empty.pem", "\n");
  auto loaded = load_web_security(s.write(
      "web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_MADE_UP]\n"));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().key, "tls_server_config.cipher_suites");
  EXPECT_EQ(loaded.error().line, 4);
  EXPECT_NE(loaded.error().reason.find("TLS_MADE_UP"), std::string::npos);
  loaded = load_web_security(s.write("web2.yml",
                                     "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                                     "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: empty.pem\n"));
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().key, "tls_server_config.client_ca_file");
  EXPECT_EQ(loaded.error().line, 5);
}

TEST(WebSecurity, AnUnreadableWebConfigFileSaysSo) {
  auto loaded = load_web_security("/nonexistent/web.yml");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().file, "/nonexistent/web.yml");
  EXPECT_NE(loaded.error().reason.find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace memdiag
