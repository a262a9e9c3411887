// SPDX-License-Identifier: Apache-2.0
// YAML -> WebConfig with every key checked, in the exporter-toolkit's format and with its
// refusals (unknown keys, a header it does not let be set, client CAs without a client auth
// policy, ...), plus memdiagd's own where the toolkit would fail later or not at all (a hash
// that is not bcrypt, a header value with a line break). Messages name the file, the 1-based
// line and the dotted key, like the main config's (config_loader.cpp).
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "daemon/config_values.hpp"
#include "daemon/web_config.hpp"
#include "daemon/yaml_option_value.hpp"

namespace memdiag {

const std::vector<std::string_view>& configurable_header_names() {
  // The toolkit keeps this list private "to ensure consistency in the Prometheus ecosystem".
  static const std::vector<std::string_view> names = {"Content-Security-Policy", "Strict-Transport-Security",
                                                      "X-Content-Type-Options", "X-Frame-Options",
                                                      "X-XSS-Protection"};
  return names;
}

bool is_bcrypt_hash(std::string_view hash) {
  if (hash.size() != 60 || hash.substr(0, 2) != "$2") return false;
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (hash[3] != '$' || hash[6] != '$') return false;
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
  });
}

std::vector<std::string> WebConfig::named_files() const {
  std::vector<std::string> files;
  if (!tls_enabled) return files;
  for (const std::string* f : {&tls.cert_file, &tls.key_file, &tls.client_ca_file}) {
    if (!f->empty()) files.push_back(*f);
  }
  return files;
}

namespace {

// Thrown only inside this file and turned into a ConfigError value at its edge.
struct Refusal {
  ConfigError error;
};

constexpr std::string_view kTls = "tls_server_config";
constexpr std::string_view kHttp = "http_server_config";

class WebLoader {
 public:
  explicit WebLoader(std::string file) : file_(std::move(file)) {
    dir_ = std::filesystem::path(file_).parent_path();
  }

  WebConfig load(const YAML::Node& root) {
    WebConfig config;
    config.file = file_;
    if (!root || root.IsNull()) return config;  // an empty file: no TLS, no auth, no headers
    expect_map(root, "<root>");
    for_each_key(root, "", {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"},
                 [&](const std::string& key, const YAML::Node& value) {
                   if (key == "rate_limit") {
                     refuse(value, key, "not supported by memdiagd (its connection and head limits bound what a client "
                                        "can hold; see docs/operations.md \"Running it\")");
                   }
                   if (value.IsNull()) return;
                   if (key == kTls) load_tls(value, config);
                   if (key == kHttp) load_http(value, config);
                   if (key == "basic_auth_users") load_users(value, config);
                 });
    config.lines = lines_;
    if (config.tls_enabled) check_tls(root[std::string(kTls)], config);
    return config;
  }

 private:
  [[noreturn]] void refuse(const YAML::Node& at, const std::string& key, const std::string& reason) const {
    throw Refusal{ConfigError{file_, at.Mark().line + 1, key, reason}};
  }
  [[noreturn]] void refuse_line(int line, const std::string& key, const std::string& reason) const {
    throw Refusal{ConfigError{file_, line, key, reason}};
  }

  void expect_map(const YAML::Node& node, const std::string& key) const {
    if (!node.IsMap()) refuse(node, key, "expected a mapping (key: value lines)");
  }

  static std::string join(std::string_view prefix, const std::string& key) {
    return prefix.empty() ? key : std::string(prefix) + "." + key;
  }

  // Visits each key of a mapping, refusing unknown and duplicate keys (the toolkit parses
  // strictly too), and records each key's line.
  void for_each_key(const YAML::Node& map, std::string_view prefix, const std::vector<std::string_view>& known,
                    const std::function<void(const std::string&, const YAML::Node&)>& visit) {
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const YAML::Node& key_node = entry.first;
      if (!key_node.IsScalar()) refuse(key_node, prefix.empty() ? "<root>" : std::string(prefix), "keys must be plain words");
      const std::string key = key_node.Scalar();
      const std::string full = join(prefix, key);
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string reason = "unknown key";
        if (auto hint = closest_match(key, known)) {
          reason += "; did you mean '" + *hint + "'?";
        } else {
          reason += "; expected one of:";
          for (std::string_view k : known) reason += " " + std::string(k);
        }
        refuse(key_node, full, reason);
      }
      if (!seen.insert(key).second) refuse(key_node, full, "duplicate key");
      lines_[full] = key_node.Mark().line + 1;
      visit(key, entry.second);
    }
  }

  std::string text(const YAML::Node& node, const std::string& key) const {
    auto value = YamlOptionValue(node).text();
    if (!value) refuse_line(value.error().line, key, value.error().reason);
    return std::move(value).value();
  }
  bool boolean(const YAML::Node& node, const std::string& key) const {
    auto value = YamlOptionValue(node).boolean();
    if (!value) refuse_line(value.error().line, key, value.error().reason);
    return *value;
  }
  std::vector<std::string> texts(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) refuse(node, key, "expected a list (lines starting with '- ')");
    std::vector<std::string> out;
    for (const auto& item : node) out.push_back(text(item, key));
    return out;
  }
  // Relative to the web config file's directory, as the toolkit resolves them.
  std::string path(const YAML::Node& node, const std::string& key) const {
    const std::string written = text(node, key);
    if (written.empty()) return written;
    const std::filesystem::path p(written);
    return p.is_absolute() || dir_.empty() ? written : (dir_ / p).string();
  }

  static std::optional<TlsVersion> version(std::string_view name) {
    if (name == "TLS10") return TlsVersion::kTls10;
    if (name == "TLS11") return TlsVersion::kTls11;
    if (name == "TLS12") return TlsVersion::kTls12;
    if (name == "TLS13") return TlsVersion::kTls13;
    return std::nullopt;
  }

  void load_tls(const YAML::Node& node, WebConfig& config) {
    expect_map(node, std::string(kTls));
    TlsServerSettings& tls = config.tls;
    for_each_key(node, kTls,
                 {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version",
                  "cipher_suites", "curve_preferences", "prefer_server_cipher_suites", "client_allowed_sans", "cert",
                  "key", "client_ca"},
                 [&](const std::string& key, const YAML::Node& v) {
                   const std::string full = join(kTls, key);
                   if (key == "cert" || key == "key" || key == "client_ca") {
                     refuse(v, full, "inline PEM is not supported by memdiagd: put it in a file and name it with " +
                                         key + "_file");
                   }
                   if (v.IsNull()) return;  // "key:" alone: the default, as the toolkit reads it
                   if (key == "cert_file") tls.cert_file = path(v, full);
                   if (key == "key_file") tls.key_file = path(v, full);
                   if (key == "client_ca_file") tls.client_ca_file = path(v, full);
                   if (key == "client_auth_type") tls.client_auth = client_auth(v, full);
                   if (key == "min_version" || key == "max_version") {
                     const std::string name = text(v, full);
                     const auto parsed = version(name);
                     if (!parsed) refuse(v, full, "unknown TLS version '" + name + "'; expected TLS10, TLS11, TLS12 or TLS13");
                     (key == "min_version" ? tls.min_version : tls.max_version) = *parsed;
                   }
                   if (key == "cipher_suites") tls.cipher_suites = texts(v, full);
                   if (key == "curve_preferences") tls.curve_preferences = curves(v, full);
                   if (key == "prefer_server_cipher_suites") tls.prefer_server_cipher_suites = boolean(v, full);
                   if (key == "client_allowed_sans") tls.client_allowed_sans = texts(v, full);
                 });
    // The toolkit's TLSConfig.IsEnabled: any of these set turns TLS on (and then it must be whole).
    config.tls_enabled = !tls.cert_file.empty() || !tls.key_file.empty() || !tls.client_ca_file.empty() ||
                         lines_.count("tls_server_config.client_auth_type") > 0;
  }

  ClientAuth client_auth(const YAML::Node& v, const std::string& key) const {
    const std::string name = text(v, key);
    if (name.empty() || name == "NoClientCert") return ClientAuth::kNoClientCert;
    if (name == "RequestClientCert") return ClientAuth::kRequestClientCert;
    // RequireClientCert: the toolkit keeps the old name for compatibility.
    if (name == "RequireAnyClientCert" || name == "RequireClientCert") return ClientAuth::kRequireAnyClientCert;
    if (name == "VerifyClientCertIfGiven") return ClientAuth::kVerifyClientCertIfGiven;
    if (name == "RequireAndVerifyClientCert") return ClientAuth::kRequireAndVerifyClientCert;
    refuse(v, key, "unknown client_auth_type '" + name +
                       "'; expected NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or "
                       "RequireAndVerifyClientCert");
  }

  std::vector<std::string> curves(const YAML::Node& v, const std::string& key) const {
    std::vector<std::string> groups;
    for (const std::string& name : texts(v, key)) {
      if (name == "CurveP256") groups.emplace_back("P-256");
      else if (name == "CurveP384") groups.emplace_back("P-384");
      else if (name == "CurveP521") groups.emplace_back("P-521");
      else if (name == "X25519") groups.emplace_back("X25519");
      else refuse(v, key, "unknown curve '" + name + "'; expected CurveP256, CurveP384, CurveP521 or X25519");
    }
    return groups;
  }

  // What the toolkit refuses when it turns the TLS section into a Go tls.Config, and what
  // memdiagd refuses beyond it.
  void check_tls(const YAML::Node& node, const WebConfig& config) const {
    const TlsServerSettings& tls = config.tls;
    // The line of "tls_server_config:" itself (a block mapping's own mark is its first key's).
    const int section = config.line_of(kTls) > 0 ? config.line_of(kTls) : node.Mark().line + 1;
    const auto line = [&](const char* key) {
      const int l = config.line_of(join(kTls, key));
      return l > 0 ? l : section;
    };
    if (tls.cert_file.empty()) {
      refuse_line(section, "tls_server_config.cert_file", "missing: TLS needs cert_file and key_file");
    }
    if (tls.key_file.empty()) {
      refuse_line(line("cert_file"), "tls_server_config.key_file", "missing: cert_file is set, so key_file must be too");
    }
    if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::kNoClientCert) {
      refuse_line(line("client_ca_file"), "tls_server_config.client_ca_file",
                  "client CAs are set without a client auth policy: set client_auth_type (RequireAndVerifyClientCert "
                  "to require and verify client certificates)");
    }
    // Go would verify against the system's roots here; a scrape client's certificate from any
    // public CA is never what is meant, so memdiagd asks for the CA instead.
    if (tls.client_ca_file.empty() && (tls.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                                       tls.client_auth == ClientAuth::kRequireAndVerifyClientCert)) {
      refuse_line(line("client_auth_type"), "tls_server_config.client_ca_file",
                  "missing: client_auth_type verifies client certificates, so it needs the CA to verify them against");
    }
    // Stricter than the toolkit, which also takes RequireAnyClientCert: there the certificate is
    // not verified, so anyone can make one that carries an allowed SAN, and the list would only
    // look like a restriction.
    if (!tls.client_allowed_sans.empty() && tls.client_auth != ClientAuth::kRequireAndVerifyClientCert) {
      refuse_line(line("client_allowed_sans"), "tls_server_config.client_allowed_sans",
                  "needs client_auth_type RequireAndVerifyClientCert (otherwise the certificate is not verified, or "
                  "not even required, so anyone can present an allowed SAN)");
    }
    if (tls.min_version > tls.max_version) {
      refuse_line(line("min_version"), "tls_server_config.min_version", "higher than max_version");
    }
  }

  void load_http(const YAML::Node& node, WebConfig& config) {
    expect_map(node, std::string(kHttp));
    for_each_key(node, kHttp, {"http2", "headers"}, [&](const std::string& key, const YAML::Node& v) {
      const std::string full = join(kHttp, key);
      if (v.IsNull()) return;
      if (key == "http2") config.http2 = boolean(v, full);
      if (key == "headers") load_headers(v, config);
    });
  }

  void load_headers(const YAML::Node& node, WebConfig& config) {
    const std::string prefix = std::string(kHttp) + ".headers";
    expect_map(node, prefix);
    const auto& names = configurable_header_names();
    for (const auto& entry : node) {
      const std::string name = text(entry.first, prefix);
      const std::string full = prefix + "." + name;
      // Exactly as spelled: the toolkit looks names up in a Go map, so "x-frame-options" is
      // refused there too.
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string reason = "this HTTP header can not be configured; allowed:";
        for (std::string_view n : names) reason += " " + std::string(n);
        refuse(entry.first, full, reason);
      }
      if (std::any_of(config.headers.begin(), config.headers.end(), [&](const auto& h) { return h.first == name; })) {
        refuse(entry.first, full, "duplicate key");
      }
      const std::string value = entry.second.IsNull() ? std::string() : text(entry.second, full);
      if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
        refuse(entry.second, full, "a header value cannot hold control characters or line breaks");
      }
      if (name == "X-Content-Type-Options" && !value.empty() && value != "nosniff") {
        refuse(entry.second, full, "expected nosniff, got '" + value + "'");
      }
      if (name == "X-Frame-Options" && !value.empty() && value != "deny" && value != "sameorigin") {
        refuse(entry.second, full, "expected deny or sameorigin, got '" + value + "'");
      }
      lines_[full] = entry.first.Mark().line + 1;
      if (!value.empty()) config.headers.emplace_back(name, value);  // blank: unset, as the toolkit reads it
    }
  }

  void load_users(const YAML::Node& node, WebConfig& config) {
    expect_map(node, "basic_auth_users");
    for (const auto& entry : node) {
      const std::string user = text(entry.first, "basic_auth_users");
      const std::string full = "basic_auth_users." + user;
      // RFC 7617: the user-id ends at the first colon, so a name with one could never log in.
      if (user.find(':') != std::string::npos) refuse(entry.first, full, "a user name cannot contain ':'");
      if (config.users.count(user) > 0) refuse(entry.first, full, "duplicate key");
      const std::string hash = entry.second.IsNull() ? std::string() : text(entry.second, full);
      if (!is_bcrypt_hash(hash)) {
        refuse(entry.second.IsNull() ? entry.first : entry.second, full,
               "not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04-31, 60 characters; e.g. from htpasswd -nBC 10 USER)");
      }
      lines_[full] = entry.first.Mark().line + 1;
      config.users.emplace(user, hash);
    }
  }

  std::string file_;
  std::filesystem::path dir_;
  std::map<std::string, int, std::less<>> lines_;
};

}  // namespace

WebConfigResult parse_web_config(std::string_view yaml_text, const std::string& file) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    return WebLoader(file).load(root);
  } catch (const Refusal& r) {
    return r.error;
  } catch (const YAML::Exception& e) {
    return ConfigError{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "<yaml>", "not valid YAML: " + e.msg};
  }
}

WebConfigResult load_web_config_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = 1 << 20;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    return ConfigError{path, 0, "", "cannot read the web config file: " + std::string(std::strerror(errno))};
  }
  if (!S_ISREG(st.st_mode)) return ConfigError{path, 0, "", "the web config file is not a regular file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return ConfigError{path, 0, "", "cannot read the web config file: " + std::string(std::strerror(errno))};
  std::string text;
  char chunk[16384];
  while (text.size() <= kMaxBytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (text.size() > kMaxBytes) return ConfigError{path, 0, "", "larger than 1 MiB; not a web config file"};
  return parse_web_config(text, path);
}

}  // namespace memdiag
