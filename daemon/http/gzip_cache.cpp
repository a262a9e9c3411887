// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/gzip_cache.hpp"

#include <zlib.h>

namespace memdiag::http {

Expected<std::string> gzip(std::string_view text) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer around the deflate stream; 8: zlib's default memory.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return make_error("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return make_error("gzip: deflate did not finish");
  return out;
}

std::shared_ptr<const std::string> GzipCache::of(const std::shared_ptr<const std::string>& body) {
  if (!body) return nullptr;
  std::lock_guard lock(mutex_);
  if (body != source_) {
    auto compressed = gzip(*body);
    source_ = body;
    compressed_ = compressed ? std::make_shared<const std::string>(std::move(compressed).value()) : nullptr;
  }
  return compressed_;
}

}  // namespace memdiag::http
