// SPDX-License-Identifier: Apache-2.0
// The benchmarks' lines for people (setup notes, checks, summaries, cleanup) next to their
// machine-readable output: info() prints to g_info, stdout by default; a benchmark whose stdout
// carries JSON or CSV sets g_info = stderr so those lines do not corrupt it. Every line is
// flushed at once, so it appears in order with Google Benchmark's output and survives a crash.
#pragma once

#include <cstdarg>
#include <cstdio>

namespace memdiag::bench {

inline std::FILE* g_info = stdout;

inline void info(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline void info(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(g_info, format, args);
  va_end(args);
  std::fflush(g_info);
}

}  // namespace memdiag::bench
