// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/tls_context.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

namespace memdiag::http {
namespace {

// OpenSSL's reason for the last failure, and its error queue emptied (one thread's queue: a
// failure here must not show up in a later connection's error).
std::string openssl_reason() {
  std::string reason;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    if (reason.empty()) reason = text;  // the first is the root cause; the rest say where it went
  }
  return reason.empty() ? "unknown OpenSSL error" : reason;
}

// A file OpenSSL is about to read, checked first so an unreadable one says why in the
// system's words rather than OpenSSL's.
std::optional<std::string> unreadable(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "cannot read " + path + ": " + std::strerror(errno);
  std::fclose(f);
  return std::nullopt;
}

int version_number(TlsVersion v) {
  switch (v) {
    case TlsVersion::kTls10: return TLS1_VERSION;
    case TlsVersion::kTls11: return TLS1_1_VERSION;
    case TlsVersion::kTls12: return TLS1_2_VERSION;
    case TlsVersion::kTls13: return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

// Where each SSL_CTX keeps its TlsContext, for the verify callback.
int context_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// A key with a passphrase would make OpenSSL ask for it on the terminal: refuse it instead.
int no_passphrase(char*, int, int, void*) { return 0; }

// Go's IANA cipher suite names (as cipher_suites takes them) to OpenSSL's, for TLS 1.2 and
// below. TLS 1.3's suites are not configurable, in Go as here: their names are accepted and
// have no effect. Refusal: the name OpenSSL does not know.
Expected<std::string> openssl_cipher_list(const std::vector<std::string>& names) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> every(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!every) return Error{openssl_reason()};
  SSL_CTX_set_security_level(every.get(), 0);
  SSL_CTX_set_cipher_list(every.get(), "ALL:COMPLEMENTOFALL");
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(every.get());
  std::string list;
  for (const std::string& name : names) {
    const SSL_CIPHER* found = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
      const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
      const char* standard = SSL_CIPHER_standard_name(c);
      if (standard != nullptr && name == standard) found = c;
    }
    if (found == nullptr) return Error{"unknown cipher suite '" + name + "'"};
    if (std::strcmp(SSL_CIPHER_get_version(found), "TLSv1.3") == 0) continue;
    if (!list.empty()) list += ':';
    list += SSL_CIPHER_get_name(found);
  }
  return list;
}

// Offers HTTP/1.1 to a client that asks for protocols by ALPN (Prometheus offers h2 and
// http/1.1): memdiagd speaks HTTP/1.1 only (http_server_config.http2 has no effect).
int select_http11(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* offered,
                  unsigned int offered_length, void*) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_length, kHttp11, sizeof kHttp11, offered, offered_length) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

std::vector<std::string> subject_alt_names(X509* certificate) {
  std::vector<std::string> out;
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    const ASN1_STRING* text = nullptr;
    switch (name->type) {
      case GEN_DNS: text = name->d.dNSName; break;
      case GEN_EMAIL: text = name->d.rfc822Name; break;
      case GEN_URI: text = name->d.uniformResourceIdentifier; break;
      case GEN_IPADD: {
        const ASN1_OCTET_STRING* ip = name->d.iPAddress;
        char printed[INET6_ADDRSTRLEN] = {};
        const int family = ip->length == 4 ? AF_INET : ip->length == 16 ? AF_INET6 : 0;
        if (family != 0 && ::inet_ntop(family, ip->data, printed, sizeof printed) != nullptr) out.emplace_back(printed);
        break;
      }
      default: break;
    }
    if (text != nullptr) {
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                       static_cast<std::size_t>(ASN1_STRING_length(text)));
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

}  // namespace

// Go's client auth types on OpenSSL's verification: OpenSSL checks the chain against the
// client CAs and reports each certificate here, root first; the answer decides.
int verify_client(int preverified, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* self = static_cast<const TlsContext*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), context_index()));
  if (self == nullptr) return 0;
  const bool verifies = self->client_auth_ == ClientAuth::kVerifyClientCertIfGiven ||
                        self->client_auth_ == ClientAuth::kRequireAndVerifyClientCert;
  if (verifies && preverified == 0) return 0;
  // The client's own certificate is depth 0; a SAN list applies to it alone.
  if (X509_STORE_CTX_get_error_depth(store) == 0 && !self->allowed(X509_STORE_CTX_get_current_cert(store))) {
    X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
  }
  return 1;  // RequestClientCert, RequireAnyClientCert: any certificate is taken as it is
}

bool TlsContext::allowed(X509* certificate) const {
  if (allowed_sans_.empty()) return true;
  if (certificate == nullptr) return false;
  for (const std::string& san : subject_alt_names(certificate)) {
    if (std::find(allowed_sans_.begin(), allowed_sans_.end(), san) != allowed_sans_.end()) return true;
  }
  return false;
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

Expected<std::shared_ptr<const TlsContext>, TlsRefusal> TlsContext::create(const TlsServerSettings& settings) {
  ERR_clear_error();
  std::shared_ptr<TlsContext> self(new TlsContext());
  self->client_auth_ = settings.client_auth;
  self->allowed_sans_ = settings.client_allowed_sans;
  SSL_CTX* ctx = self->context_ = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return TlsRefusal{"", "cannot make a TLS context: " + openssl_reason()};
  SSL_CTX_set_ex_data(ctx, context_index(), self.get());

  // Renegotiation is a way to make the server do handshakes' work again on one connection;
  // nothing here needs it.
  long options = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (settings.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  // Partial writes and a buffer that moves between retries, as a non-blocking socket's send
  // does; idle connections give their read and write buffers back (~34 KiB each).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_set_min_proto_version(ctx, version_number(settings.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, version_number(settings.max_version)) != 1) {
    return TlsRefusal{"min_version", openssl_reason()};
  }
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  SSL_CTX_set_alpn_select_cb(ctx, select_http11, nullptr);
  // Session resumption with client certificates needs an id context, or OpenSSL fails it.
  static const unsigned char kSessionContext[] = "memdiagd";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  // OpenSSL's default server cache holds 20,480 sessions (each with the client's certificate)
  // for 300 s, in the daemon's locked memory: a few scrapers need a few. TLS 1.3 resumes from
  // tickets, which the cache does not hold.
  SSL_CTX_sess_set_cache_size(ctx, 256);

  if (auto why = unreadable(settings.cert_file)) return TlsRefusal{"cert_file", *why};
  if (SSL_CTX_use_certificate_chain_file(ctx, settings.cert_file.c_str()) != 1) {
    return TlsRefusal{"cert_file", "cannot use " + settings.cert_file + " as a PEM certificate: " + openssl_reason()};
  }
  if (auto why = unreadable(settings.key_file)) return TlsRefusal{"key_file", *why};
  std::FILE* key_file = std::fopen(settings.key_file.c_str(), "rb");
  EVP_PKEY* key = key_file == nullptr ? nullptr : PEM_read_PrivateKey(key_file, nullptr, no_passphrase, nullptr);
  if (key_file != nullptr) std::fclose(key_file);
  if (key == nullptr) {
    return TlsRefusal{"key_file", "cannot use " + settings.key_file +
                                      " as a PEM private key without a passphrase: " + openssl_reason()};
  }
  const bool matches = X509_check_private_key(SSL_CTX_get0_certificate(ctx), key) == 1;
  const bool used = matches && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!matches) {
    ERR_clear_error();
    return TlsRefusal{"key_file", settings.key_file + " is not the key of the certificate in " + settings.cert_file};
  }
  if (!used) return TlsRefusal{"key_file", "cannot use " + settings.key_file + ": " + openssl_reason()};

  if (!settings.client_ca_file.empty()) {
    if (auto why = unreadable(settings.client_ca_file)) return TlsRefusal{"client_ca_file", *why};
    if (SSL_CTX_load_verify_locations(ctx, settings.client_ca_file.c_str(), nullptr) != 1) {
      return TlsRefusal{"client_ca_file", "holds no usable PEM certificate: " + openssl_reason()};
    }
    // The CAs named in the certificate request, so a client with several certificates picks the right one.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(settings.client_ca_file.c_str());
    if (names == nullptr) return TlsRefusal{"client_ca_file", "holds no PEM certificate: " + openssl_reason()};
    SSL_CTX_set_client_CA_list(ctx, names);
  }
  int mode = SSL_VERIFY_NONE;
  switch (settings.client_auth) {
    case ClientAuth::kNoClientCert: break;
    case ClientAuth::kRequestClientCert:
    case ClientAuth::kVerifyClientCertIfGiven: mode = SSL_VERIFY_PEER; break;
    case ClientAuth::kRequireAnyClientCert:
    case ClientAuth::kRequireAndVerifyClientCert: mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT; break;
  }
  SSL_CTX_set_verify(ctx, mode, mode == SSL_VERIFY_NONE ? nullptr : verify_client);

  if (!settings.cipher_suites.empty()) {
    auto list = openssl_cipher_list(settings.cipher_suites);
    if (!list) return TlsRefusal{"cipher_suites", list.error().message};
    if (!list->empty() && SSL_CTX_set_cipher_list(ctx, list->c_str()) != 1) {
      return TlsRefusal{"cipher_suites", "none of them is usable here: " + openssl_reason()};
    }
  }
  if (!settings.curve_preferences.empty()) {
    std::string groups;
    for (const std::string& g : settings.curve_preferences) groups += (groups.empty() ? "" : ":") + g;
    if (SSL_CTX_set1_groups_list(ctx, groups.c_str()) != 1) {
      return TlsRefusal{"curve_preferences", "not usable here: " + openssl_reason()};
    }
  }
  return std::shared_ptr<const TlsContext>(std::move(self));
}

}  // namespace memdiag::http
