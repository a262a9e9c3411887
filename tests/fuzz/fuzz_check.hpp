// SPDX-License-Identifier: Apache-2.0
// Property checks for fuzz targets. Not assert(): the default RelWithDebInfo build defines
// NDEBUG, which would silently turn every property into a no-op. An abort() is what libFuzzer
// reports as a crash and saves as a reproducer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                                     \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace memdiag::fuzz {

// The raw libFuzzer buffer, not a copy: it is heap-allocated with exactly `size` bytes, so a
// parser reading one byte past the end trips AddressSanitizer.
inline std::string_view as_text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// True if `part` points into `whole` (parsers return views into their input, never copies).
inline bool is_within(std::string_view part, std::string_view whole) {
  // Compared as integers: ordering unrelated pointers with < is unspecified.
  const auto begin = reinterpret_cast<std::uintptr_t>(whole.data());
  const auto first = reinterpret_cast<std::uintptr_t>(part.data());
  return first >= begin && first + part.size() <= begin + whole.size();
}

}  // namespace memdiag::fuzz
