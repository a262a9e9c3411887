// SPDX-License-Identifier: Apache-2.0
// The HTTP request-head parser on arbitrary bytes, as a client of /metrics may send them.
// find_head_end must agree whether the input arrives at once or a byte at a time; whatever
// parse_request_head accepts must be views into its input with a method token, a path and
// HTTP/1.0 or 1.1; every refusal carries a status the server can send and a reason.
#include <string_view>

#include "daemon/http/request_head.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using memdiag::fuzz::as_text;
using memdiag::fuzz::is_within;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  const std::size_t end = memdiag::http::find_head_end(text);
  if (end != std::string_view::npos) FUZZ_CHECK(end <= text.size() && text[end - 1] == '\n');

  // Incrementally, in uneven steps, the end is found at the same place.
  std::size_t scanned = 0;
  std::size_t found = std::string_view::npos;
  for (std::size_t n = 0; n <= text.size() && found == std::string_view::npos; n += 1 + n % 7) {
    found = memdiag::http::find_head_end(text.substr(0, n), scanned);
    scanned = n;
  }
  if (found == std::string_view::npos) found = memdiag::http::find_head_end(text, scanned);
  FUZZ_CHECK(found == end);

  const auto head = memdiag::http::parse_request_head(text.substr(0, end == std::string_view::npos ? size : end));
  if (!head) {
    const int status = head.error().status;
    FUZZ_CHECK(status == 400 || status == 431 || status == 505);
    FUZZ_CHECK(!head.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(is_within(head->method, text) && !head->method.empty());
  FUZZ_CHECK(is_within(head->target, text) && !head->target.empty());
  FUZZ_CHECK(is_within(head->path, text) || head->path == "/");
  FUZZ_CHECK(head->path == "*" || (!head->path.empty() && head->path.front() == '/'));
  FUZZ_CHECK(head->path.find_first_of("?# \r\n") == std::string_view::npos);
  FUZZ_CHECK(head->minor_version == 0 || head->minor_version == 1);
  FUZZ_CHECK(head->fields.size() <= memdiag::http::kMaxHeaderFields);
  for (const auto& field : head->fields) {
    FUZZ_CHECK(is_within(field.name, text) && !field.name.empty());
    FUZZ_CHECK(field.value.find_first_of("\r\n") == std::string_view::npos);
  }
  return 0;
}
