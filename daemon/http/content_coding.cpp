// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/content_coding.hpp"

#include <cctype>
#include <charconv>

namespace memdiag::http {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// The q of ";q=0.5" parameters (1 without one; 0 for a malformed q, which refuses the coding).
double quality(std::string_view parameters) {
  while (!parameters.empty()) {
    const auto semicolon = parameters.find(';');
    std::string_view parameter = trim(parameters.substr(0, semicolon));
    parameters = semicolon == std::string_view::npos ? std::string_view{} : parameters.substr(semicolon + 1);
    if (parameter.size() >= 2 && (parameter[0] == 'q' || parameter[0] == 'Q') && parameter[1] == '=') {
      std::string_view value = parameter.substr(2);
      double q = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), q);
      if (ec != std::errc() || end != value.data() + value.size() || q < 0 || q > 1) return 0;
      return q;
    }
  }
  return 1;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
  double gzip_q = -1, any_q = -1;
  while (!accept_encoding.empty()) {
    const auto comma = accept_encoding.find(',');
    std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding = comma == std::string_view::npos ? std::string_view{} : accept_encoding.substr(comma + 1);
    const auto semicolon = element.find(';');
    const std::string_view coding = trim(element.substr(0, semicolon));
    const double q = semicolon == std::string_view::npos ? 1 : quality(element.substr(semicolon + 1));
    if (equals_ignoring_case(coding, "gzip") || equals_ignoring_case(coding, "x-gzip")) {
      gzip_q = q;
    } else if (coding == "*") {
      any_q = q;
    }
  }
  // gzip named decides; else "*" does.
  return gzip_q >= 0 ? gzip_q > 0 : any_q > 0;
}

bool accepts_gzip(const RequestHead& request) {
  const auto field = request.field("Accept-Encoding");
  return field && accepts_gzip(*field);
}

}  // namespace memdiag::http
