// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/libbpf_log.hpp"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <vector>

namespace memdiag {
namespace {

// One capture per thread at a time (nested ones stack): libbpf calls its print function on the
// thread doing the work, so a thread_local needs no locking.
thread_local LibbpfLogCapture* t_capture = nullptr;

// Keep the tail only: a verifier log can be megabytes and only its end says what failed.
constexpr std::size_t kMaxKept = 16 * 1024;

int route(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG || t_capture == nullptr) return 0;
  va_list copy;
  va_copy(copy, args);
  const int needed = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (needed <= 0) return 0;
  std::vector<char> text(static_cast<std::size_t>(needed) + 1);
  std::vsnprintf(text.data(), text.size(), format, args);
  t_capture->append(std::string_view(text.data(), static_cast<std::size_t>(needed)), level == LIBBPF_WARN);
  return needed;
}

}  // namespace

void silence_libbpf() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(route); });
}

LibbpfLogCapture::LibbpfLogCapture(LibbpfLogFn forward) : forward_(std::move(forward)), previous_(t_capture) {
  silence_libbpf();
  t_capture = this;
}

LibbpfLogCapture::~LibbpfLogCapture() { t_capture = previous_; }

void LibbpfLogCapture::append(std::string_view message, bool warning) {
  // A message may hold several lines (the verifier log) or end without a newline.
  while (!message.empty()) {
    const std::size_t eol = message.find('\n');
    std::string_view line = message.substr(0, eol);
    message = eol == std::string_view::npos ? std::string_view{} : message.substr(eol + 1);
    if (line.empty()) continue;
    if (forward_) forward_(line);
    if (!warning) continue;
    last_warning_.assign(line);
    warnings_.append(line).push_back('\n');
    if (warnings_.size() > kMaxKept) warnings_.erase(0, warnings_.size() - kMaxKept / 2);
  }
}

std::string LibbpfLogCapture::last_warnings(std::size_t n) const {
  // Walk back over n lines, then return them in their original order.
  std::size_t begin = warnings_.size();
  for (std::size_t lines = 0; lines < n && begin > 0; ++lines) {
    const std::size_t prev = warnings_.rfind('\n', begin >= 2 ? begin - 2 : 0);
    begin = (prev == std::string::npos || begin < 2) ? 0 : prev + 1;
  }
  std::string out;
  std::string_view rest = std::string_view(warnings_).substr(begin);
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    if (!out.empty()) out += " | ";
    out.append(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
  }
  return out;
}

void LibbpfLogCapture::clear() {
  last_warning_.clear();
  warnings_.clear();
}

}  // namespace memdiag
