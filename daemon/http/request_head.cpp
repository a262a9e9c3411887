// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/request_head.hpp"

#include <charconv>
#include <cstring>

namespace memdiag::http {
namespace {

// RFC 9110 token characters: what a method and a field name may be made of.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next line of `rest` without its CRLF or LF; advances `rest` past it.
std::string_view next_line(std::string_view& rest) {
  const std::size_t lf = rest.find('\n');
  std::string_view line = rest.substr(0, lf);
  rest.remove_prefix(lf == std::string_view::npos ? rest.size() : lf + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

HeadError bad(std::string message) { return HeadError{400, std::move(message)}; }

// Origin form ("/p?q"), absolute form ("http://host/p?q", what proxies send) or "*".
Expected<std::string_view, HeadError> path_of(std::string_view target) {
  for (char c : target) {
    if (c <= ' ' || c == 0x7f) return bad("control character or space in the request target");
  }
  if (target == "*") return target;
  if (target.front() != '/') {
    const std::size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) return bad("request target is not a path");
    const std::size_t path_start = target.find('/', scheme_end + 3);
    if (path_start == std::string_view::npos) return std::string_view("/");
    target.remove_prefix(path_start);
  }
  return target.substr(0, target.find_first_of("?#"));
}

// "close" and "keep-alive" among the comma-separated options of a Connection field.
void read_connection_options(std::string_view value, bool& close, bool& keep_alive) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view option = trim(value.substr(0, comma));
    if (iequals(option, "close")) close = true;
    if (iequals(option, "keep-alive")) keep_alive = true;
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
  }
}

}  // namespace

std::optional<std::string_view> RequestHead::field(std::string_view name) const {
  for (const HeaderField& f : fields) {
    if (iequals(f.name, name)) return f.value;
  }
  return std::nullopt;
}

std::size_t find_head_end(std::string_view received, std::size_t scan_from) {
  // The blank line is LF LF or LF CR LF; two bytes before scan_from may start one that
  // the new bytes complete.
  std::size_t i = scan_from >= 2 ? scan_from - 2 : 0;
  while (i < received.size()) {
    const void* lf = std::memchr(received.data() + i, '\n', received.size() - i);
    if (lf == nullptr) return std::string_view::npos;
    i = static_cast<std::size_t>(static_cast<const char*>(lf) - received.data());
    if (i + 1 < received.size() && received[i + 1] == '\n') return i + 2;
    if (i + 2 < received.size() && received[i + 1] == '\r' && received[i + 2] == '\n') return i + 3;
    ++i;
  }
  return std::string_view::npos;
}

Expected<RequestHead, HeadError> parse_request_head(std::string_view head) {
  std::string_view rest = head;
  std::string_view line;
  do {
    if (rest.empty()) return bad("no request line");
    line = next_line(rest);
  } while (line.empty());

  // request-line = method SP request-target SP HTTP-version, single spaces.
  const std::size_t first_space = line.find(' ');
  const std::size_t second_space = first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos) return bad("malformed request line");
  RequestHead parsed;
  parsed.method = line.substr(0, first_space);
  parsed.target = line.substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = line.substr(second_space + 1);
  if (!is_token(parsed.method)) return bad("malformed method");
  if (parsed.target.empty()) return bad("empty request target");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return bad("malformed HTTP version");
  }
  if (version[5] != '1') return HeadError{505, "only HTTP/1.0 and HTTP/1.1 are served"};
  parsed.minor_version = version[7] == '0' ? 0 : 1;  // a later 1.x is answered as 1.1 (RFC 9110 2.5)
  auto path = path_of(parsed.target);
  if (!path) return path.error();
  parsed.path = *path;

  bool close = false;
  bool keep_alive = false;
  std::optional<unsigned long long> content_length;
  while (!rest.empty()) {
    line = next_line(rest);
    if (line.empty()) break;  // the blank line that ends the head
    if (line.front() == ' ' || line.front() == '\t') return bad("folded header line (obsolete, refused)");
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return bad("header line without a colon");
    const std::string_view name = line.substr(0, colon);
    if (!is_token(name)) return bad("malformed header field name");
    const std::string_view value = trim(line.substr(colon + 1));
    for (char c : value) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
        return bad("control character in header field value");
      }
    }
    if (parsed.fields.size() == kMaxHeaderFields) return HeadError{431, "too many header fields"};
    parsed.fields.push_back(HeaderField{name, value});
    if (iequals(name, "connection")) {
      read_connection_options(value, close, keep_alive);
    } else if (iequals(name, "content-length")) {
      unsigned long long n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return bad("malformed Content-Length");
      if (content_length && *content_length != n) return bad("conflicting Content-Length fields");
      content_length = n;
    } else if (iequals(name, "transfer-encoding")) {
      parsed.has_body = true;
    }
  }
  if (content_length && *content_length > 0) parsed.has_body = true;
  parsed.keep_alive = !close && (parsed.minor_version >= 1 || keep_alive);
  return parsed;
}

}  // namespace memdiag::http
