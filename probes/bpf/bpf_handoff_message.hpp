// SPDX-License-Identifier: Apache-2.0
// The message a BPF loader child sends back with its descriptors (bpf_loader_child.hpp): which
// descriptor is which, the probe's own report (how its units attached), libbpf's log lines, or
// why the load failed. Encoding and decoding are pure, so the decoder can be fed truncated and
// garbage bytes in tests and by the fuzzer: the parent must never trust a length it read.
//
// Layout, little-endian: "MDBH", then u32 fields and u32-length-prefixed strings (WireWriter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

// Bounds the decoder enforces (and the encoder respects): one SOCK_SEQPACKET message.
inline constexpr std::size_t kHandoffMaxBytes = 64 * 1024;
inline constexpr std::size_t kHandoffMaxDescriptors = 250;  // below the kernel's SCM_MAX_FD (253)
inline constexpr std::size_t kHandoffMaxLogLines = 64;

struct BpfHandoffMessage {
  std::string error;               // non-empty: the load failed and no descriptors follow
  std::vector<std::string> names;  // one per descriptor, in the order they were sent
  std::string report;              // the probe's own, opaque here
  std::vector<std::string> log;    // libbpf's lines during the load, oldest first

  bool operator==(const BpfHandoffMessage&) const = default;
};

// Strings too long for the message are cut (the report never is: a report that does not fit
// turns the message into an error saying so).
std::string encode_handoff(const BpfHandoffMessage& message);
// descriptors: how many arrived with the bytes; the names must account for exactly those.
Expected<BpfHandoffMessage> decode_handoff(std::string_view bytes, std::size_t descriptors);

// Length-prefixed fields, for the message and for the reports probes put inside it.
class WireWriter {
 public:
  void u32(std::uint32_t value);
  void text(std::string_view value);
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : rest_(bytes) {}
  Expected<std::uint32_t> u32(const char* what);
  Expected<std::string> text(const char* what, std::size_t max_bytes);
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace memdiag
