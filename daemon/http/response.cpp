#include "daemon/http/response.hpp"

#include <cstring>

namespace memdiag::http {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
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

std::string body_buffer() { return std::string(kHeadRoom, ' '); }

WireResponse finish_response(std::string buffer, const ResponseHead& head, bool head_only) {
  const std::size_t body_size = buffer.size() - kHeadRoom;
  std::string text;
  text.reserve(kHeadRoom);
  text += "HTTP/1.1 ";
  text += std::to_string(head.status);
  text += ' ';
  text += reason_phrase(head.status);
  text += "\r\nContent-Type: ";
  text += head.content_type;
  text += "\r\nContent-Length: ";
  text += std::to_string(body_size);
  text += "\r\nCache-Control: no-store\r\n";
  if (!head.allow.empty()) {
    text += "Allow: ";
    text += head.allow;
    text += "\r\n";
  }
  if (head.close) text += "Connection: close\r\n";
  text += "\r\n";
  WireResponse response;
  response.close = head.close;
  if (text.size() > kHeadRoom) {  // not with this server's heads; correct, if slower, anyway
    if (!head_only) text.append(buffer, kHeadRoom);
    response.buffer = std::move(text);
    return response;
  }
  response.start = kHeadRoom - text.size();
  std::memcpy(buffer.data() + response.start, text.data(), text.size());
  if (head_only) buffer.resize(kHeadRoom);
  response.buffer = std::move(buffer);
  return response;
}

WireResponse text_response(const ResponseHead& head, std::string_view body, bool head_only) {
  std::string buffer = body_buffer();
  buffer += body;
  return finish_response(std::move(buffer), head, head_only);
}

}  // namespace memdiag::http
