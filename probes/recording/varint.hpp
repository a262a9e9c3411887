// SPDX-License-Identifier: Apache-2.0
// LEB128 varints and zigzag signs, the number encoding of recordings (recording_format.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memdiag::recording {

inline void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads a varint at `pos`, advancing it; nullopt when the input ends inside it or it does not
// fit 64 bits (more than 10 bytes, or a tenth byte above 1).
inline std::optional<std::uint64_t> read_varint(std::string_view in, std::size_t& pos) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (pos >= in.size()) return std::nullopt;
    const auto byte = static_cast<std::uint8_t>(in[pos++]);
    if (shift == 63 && byte > 1) return std::nullopt;
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

// The difference of two numbers, modulo 2^64, as a small unsigned number when it is small
// either way.
inline std::uint64_t zigzag(std::uint64_t value, std::uint64_t base) {
  const auto d = static_cast<std::int64_t>(value - base);
  return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63);
}

inline std::uint64_t unzigzag(std::uint64_t encoded, std::uint64_t base) {
  const std::uint64_t d = (encoded >> 1) ^ (0 - (encoded & 1));
  return base + d;
}

}  // namespace memdiag::recording
