// SPDX-License-Identifier: Apache-2.0
// UTF-8 validity for text that ends up in Prometheus label values: process names, cgroup
// directory names, whatever bytes someone chose. Prometheus refuses a whole scrape over one
// label value that is not UTF-8, so invalid bytes are replaced, never passed on. Validity is
// RFC 3629's: no overlong forms, no surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace memdiag::utf8 {

// The length of the valid UTF-8 sequence `text` starts with; 0 if it starts with none.
inline std::size_t sequence_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto at = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i) { return (at(i) & 0xC0) == 0x80; };
  const unsigned char lead = at(0);
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;  // a continuation byte, or an overlong two-byte form
  if (lead < 0xE0) return text.size() >= 2 && continuation(1) ? 2 : 0;
  if (lead < 0xF0) {
    if (text.size() < 3) return 0;
    const unsigned char low = lead == 0xE0 ? 0xA0 : 0x80;   // E0: overlong below A0
    const unsigned char high = lead == 0xED ? 0x9F : 0xBF;  // ED: surrogates from A0
    return at(1) >= low && at(1) <= high && continuation(2) ? 3 : 0;
  }
  if (lead < 0xF5) {
    if (text.size() < 4) return 0;
    const unsigned char low = lead == 0xF0 ? 0x90 : 0x80;   // F0: overlong below 90
    const unsigned char high = lead == 0xF4 ? 0x8F : 0xBF;  // F4: above U+10FFFF from 90
    return at(1) >= low && at(1) <= high && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

// `text` with every byte that is not part of a valid sequence replaced by '?' (and, with
// `no_controls`, every ASCII control character too), appended to `out`.
inline void append_valid(std::string& out, std::string_view text, bool no_controls = false) {
  while (!text.empty()) {
    const std::size_t n = sequence_length(text);
    const auto c = static_cast<unsigned char>(text[0]);
    if (n == 0 || (no_controls && n == 1 && (c < 0x20 || c == 0x7F))) {
      out += '?';
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
    }
  }
}

inline std::string to_valid(std::string_view text, bool no_controls = false) {
  std::string out;
  out.reserve(text.size());
  append_valid(out, text, no_controls);
  return out;
}

}  // namespace memdiag::utf8
