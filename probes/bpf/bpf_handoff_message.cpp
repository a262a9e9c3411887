// SPDX-License-Identifier: Apache-2.0
#include "probes/bpf/bpf_handoff_message.hpp"

#include <algorithm>

namespace memdiag {

namespace {

constexpr std::string_view kMagic = "MDBH";
// Room kept for the fixed fields and the report when cutting the error and log lines.
constexpr std::size_t kMaxErrorBytes = 8 * 1024;
constexpr std::size_t kMaxLogLineBytes = 512;

std::string_view cut(std::string_view text, std::size_t max_bytes) { return text.substr(0, max_bytes); }

}  // namespace

void WireWriter::u32(std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out_.push_back(static_cast<char>((value >> shift) & 0xff));
}

void WireWriter::text(std::string_view value) {
  u32(static_cast<std::uint32_t>(value.size()));
  out_.append(value);
}

Expected<std::uint32_t> WireReader::u32(const char* what) {
  if (rest_.size() < 4) return make_error(std::string("truncated before ") + what);
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(rest_[static_cast<std::size_t>(i)]);
  rest_.remove_prefix(4);
  return value;
}

Expected<std::string> WireReader::text(const char* what, std::size_t max_bytes) {
  auto size = u32(what);
  if (!size) return size.error();
  if (*size > max_bytes) {
    return make_error(std::string(what) + " of " + std::to_string(*size) + " bytes (at most " +
                      std::to_string(max_bytes) + ")");
  }
  if (rest_.size() < *size) return make_error(std::string("truncated inside ") + what);
  std::string value(rest_.substr(0, *size));
  rest_.remove_prefix(*size);
  return value;
}

std::string encode_handoff(const BpfHandoffMessage& message) {
  WireWriter w;
  const std::size_t lines = std::min(message.log.size(), kHandoffMaxLogLines);
  w.text(cut(message.error, kMaxErrorBytes));
  w.u32(static_cast<std::uint32_t>(message.names.size()));
  for (const std::string& name : message.names) w.text(name);
  w.text(message.report);
  w.u32(static_cast<std::uint32_t>(lines));
  for (std::size_t i = message.log.size() - lines; i < message.log.size(); ++i) {
    w.text(cut(message.log[i], kMaxLogLineBytes));
  }
  if (w.bytes().size() + kMagic.size() > kHandoffMaxBytes || message.names.size() > kHandoffMaxDescriptors) {
    BpfHandoffMessage too_big;
    too_big.error = "the loader's answer does not fit one message (" + std::to_string(w.bytes().size()) +
                    " bytes, " + std::to_string(message.names.size()) + " descriptors)";
    return encode_handoff(too_big);
  }
  return std::string(kMagic) + w.bytes();
}

Expected<BpfHandoffMessage> decode_handoff(std::string_view bytes, std::size_t descriptors) {
  if (bytes.size() > kHandoffMaxBytes) return make_error("loader message of " + std::to_string(bytes.size()) + " bytes");
  if (bytes.substr(0, kMagic.size()) != kMagic) return make_error("loader message without its MDBH header");
  WireReader r(bytes.substr(kMagic.size()));
  BpfHandoffMessage out;
  auto error = r.text("error", kMaxErrorBytes);
  if (!error) return error.error();
  out.error = std::move(*error);
  auto count = r.u32("descriptor count");
  if (!count) return count.error();
  if (*count != descriptors) {
    return make_error("loader message names " + std::to_string(*count) + " descriptors, " +
                      std::to_string(descriptors) + " arrived");
  }
  if (!out.error.empty() && *count != 0) return make_error("loader message has an error and descriptors");
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto name = r.text("descriptor name", 256);
    if (!name) return name.error();
    out.names.push_back(std::move(*name));
  }
  auto report = r.text("report", kHandoffMaxBytes);
  if (!report) return report.error();
  out.report = std::move(*report);
  auto lines = r.u32("log line count");
  if (!lines) return lines.error();
  if (*lines > kHandoffMaxLogLines) return make_error("loader message with " + std::to_string(*lines) + " log lines");
  for (std::uint32_t i = 0; i < *lines; ++i) {
    auto line = r.text("log line", kMaxLogLineBytes);
    if (!line) return line.error();
    out.log.push_back(std::move(*line));
  }
  if (!r.done()) return make_error("loader message has trailing bytes");
  return out;
}

}  // namespace memdiag
