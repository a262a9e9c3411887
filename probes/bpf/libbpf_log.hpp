// SPDX-License-Identifier: Apache-2.0
// libbpf prints its warnings to stderr by default, once per failed relocation, attach or
// verifier run: noise in a daemon's journal and lost for error reporting. This routes them
// instead: while a LibbpfLogCapture lives on a thread, libbpf's messages from that thread are
// kept (so a failed load can say why) and handed to an optional callback; all other libbpf
// output is dropped. Installing the router replaces libbpf's process-wide print function.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace memdiag {

using LibbpfLogFn = std::function<void(std::string_view line)>;

class LibbpfLogCapture {
 public:
  explicit LibbpfLogCapture(LibbpfLogFn forward = {});
  ~LibbpfLogCapture();
  LibbpfLogCapture(const LibbpfLogCapture&) = delete;
  LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;

  // The last warning libbpf printed (without the trailing newline), empty if none. libbpf's
  // final line is usually the summary ("failed to load object"); the specific cause comes a
  // line or two before, so callers may prefer last_warnings().
  const std::string& last_warning() const { return last_warning_; }
  // The last few warnings joined with " | ", oldest first.
  std::string last_warnings(std::size_t n = 3) const;
  // Forgets what was captured so far (between two load attempts).
  void clear();

  // Called by the router; public only so the C callback can reach it.
  void append(std::string_view line, bool warning);

 private:
  LibbpfLogFn forward_;
  LibbpfLogCapture* previous_;
  std::string last_warning_;
  std::string warnings_;  // newline-separated, bounded
};

// Installs the router without capturing (silences libbpf). Idempotent.
void silence_libbpf();

}  // namespace memdiag
