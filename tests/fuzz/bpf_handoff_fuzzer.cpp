// SPDX-License-Identifier: Apache-2.0
// The BPF loader child's message decoder on arbitrary bytes, as a child that crashed half-way
// or a bug on the sending side could leave them. The first byte says how many descriptors
// "arrived" with the message. Whatever decodes names exactly that many, carries no
// descriptors with an error, and encodes back to a message that decodes to the same thing.
#include <string>

#include "probes/bpf/bpf_handoff_message.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using memdiag::fuzz::as_text;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t descriptors = data[0] % 8;
  const auto decoded = memdiag::decode_handoff(as_text(data + 1, size - 1), descriptors);
  if (!decoded) {
    FUZZ_CHECK(!decoded.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(decoded->names.size() == descriptors);
  FUZZ_CHECK(decoded->error.empty() || descriptors == 0);
  FUZZ_CHECK(decoded->log.size() <= memdiag::kHandoffMaxLogLines);
  const auto again = memdiag::decode_handoff(memdiag::encode_handoff(*decoded), descriptors);
  FUZZ_CHECK(again.ok() && *again == *decoded);
  return 0;
}
