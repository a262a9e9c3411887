// SPDX-License-Identifier: Apache-2.0
// The gzip of /metrics, made once per exposition: the first scraper that asks for it compressed
// pays for the compression, and every scraper after gets the same buffer (Prometheus asks for
// gzip; a busy node's 259 kB exposition is a tenth of that compressed). Linux (zlib).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "probes/core/expected.hpp"

namespace memdiag::http {

// gzip (RFC 1952) of `text`, at zlib's fastest level: the bytes shrink ~10x at any level, and
// the CPU is the daemon's.
Expected<std::string> gzip(std::string_view text);

class GzipCache {
 public:
  // The gzip of `body`, compressed when `body` is not the buffer compressed last time. Null
  // when compression failed (the caller sends `body` as it is).
  std::shared_ptr<const std::string> of(const std::shared_ptr<const std::string>& body);

 private:
  std::mutex mutex_;
  std::shared_ptr<const std::string> source_;  // the exposition last compressed
  std::shared_ptr<const std::string> compressed_;
};

}  // namespace memdiag::http
