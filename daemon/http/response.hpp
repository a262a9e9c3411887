// A response as it goes on the wire: status line and header fields written in front of a body
// that is already in the same buffer, so header and body leave in one write. (Two small writes
// on a socket made every scrape wait ~40 ms for the peer's delayed ACK; rendering the body after
// a reserved room and writing the head into it avoids copying a 1 MB exposition.)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace memdiag::http {

// Bytes kept free in front of a body for its head; every head this server writes fits.
inline constexpr std::size_t kHeadRoom = 256;

struct ResponseHead {
  int status = 200;
  std::string_view content_type = "text/plain; charset=utf-8";
  bool close = false;           // "Connection: close": the server closes after sending it
  std::string_view allow = {};  // "Allow:" field of a 405
};

// "OK", "Not Found", ...; "Unknown" for a status this server never sends.
std::string_view reason_phrase(int status);

// A response in one buffer: the bytes to send are buffer[start..].
struct WireResponse {
  std::string buffer;
  std::size_t start = 0;
  bool close = false;
  std::string_view bytes() const { return std::string_view(buffer).substr(start); }
};

// A buffer of kHeadRoom bytes (spaces) for a body to be appended to.
std::string body_buffer();

// Writes `head` (with Content-Length of the body that follows the room) into the room in
// front of the body in `buffer` (from body_buffer()). head_only: the answer to HEAD, the same
// head without the body.
WireResponse finish_response(std::string buffer, const ResponseHead& head, bool head_only = false);

// A small plain response, for the index, health and errors.
WireResponse text_response(const ResponseHead& head, std::string_view body, bool head_only = false);

}  // namespace memdiag::http
