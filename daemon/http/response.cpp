// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/response.hpp"

namespace memdiag::http {
namespace {

std::string head_text(const ResponseHead& head, std::size_t body_size) {
  std::string text;
  text.reserve(256);
  text += "HTTP/1.1 ";
  text += std::to_string(head.status);
  text += ' ';
  text += reason_phrase(head.status);
  text += "\r\nContent-Type: ";
  text += head.content_type;
  text += "\r\nContent-Length: ";
  text += std::to_string(body_size);
  text += "\r\nCache-Control: no-store\r\n";
  if (head.gzip) text += "Content-Encoding: gzip\r\n";
  if (head.gzip || head.vary_accept_encoding) text += "Vary: Accept-Encoding\r\n";
  if (!head.allow.empty()) {
    text += "Allow: ";
    text += head.allow;
    text += "\r\n";
  }
  if (!head.content_security_policy.empty()) {
    text += "Content-Security-Policy: ";
    text += head.content_security_policy;
    text += "\r\n";
  }
  if (head.close) text += "Connection: close\r\n";
  text += "\r\n";
  return text;
}

}  // namespace

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

WireResponse shared_response(const ResponseHead& head, std::shared_ptr<const std::string> body, bool head_only) {
  WireResponse response;
  response.head = head_text(head, body ? body->size() : 0);
  if (!head_only && body && !body->empty()) response.body = std::move(body);
  response.close = head.close;
  return response;
}

void add_header_field(WireResponse& response, std::string_view fields) {
  // The head made here ends at its first blank line (a text body may follow it in the same string).
  const std::size_t end = response.head.find("\r\n\r\n");
  if (end == std::string::npos || fields.empty()) return;
  response.head.insert(end + 2, fields);
}

WireResponse text_response(const ResponseHead& head, std::string_view body, bool head_only) {
  WireResponse response;
  response.head = head_text(head, body.size());
  if (!head_only) response.head += body;
  response.close = head.close;
  return response;
}

}  // namespace memdiag::http
