// SPDX-License-Identifier: Apache-2.0
// Reads a recording (recording_format.hpp) back into snapshots, one at a time, so a replay of a
// long recording holds only the ring it needs. Pure: it reads bytes the caller loaded. Every
// malformed, truncated or oversized input is an error naming the byte offset and what was
// wrong; nothing in a file can make it allocate more than the file's size allows.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/expected.hpp"
#include "probes/core/snapshot.hpp"
#include "probes/recording/recording_format.hpp"

namespace memdiag::recording {

class RecordingReader {
 public:
  // Checks the magic and the version and reads the header. The reader keeps `bytes`.
  static Expected<RecordingReader> open(std::string bytes);

  const RecordingHeader& header() const { return header_; }

  // The next snapshot, or nullopt after the last one (at the end mark). Its strings point into
  // a table the snapshot keeps alive. Snapshots come in the order they were taken; a file whose
  // times go backwards is malformed.
  Expected<std::optional<std::shared_ptr<Snapshot>>> next();

  // Snapshots read so far.
  std::uint64_t snapshots() const { return snapshots_; }
  // The error of next() was the file ending early (no end mark, or inside a frame), not bad
  // content: the snapshots before it are sound.
  bool truncated() const { return truncated_; }

  class Decoder;

 private:
  RecordingReader() = default;

  std::string bytes_;
  std::size_t pos_ = 0;
  RecordingHeader header_;
  std::shared_ptr<Decoder> decoder_;
  std::uint64_t snapshots_ = 0;
  std::chrono::system_clock::time_point last_taken_at_;
  bool ended_ = false;
  bool truncated_ = false;
};

// Every snapshot of a recording in one go (tests, the fuzz target): the header and the
// snapshots, or the first error.
struct DecodedRecording {
  RecordingHeader header;
  std::vector<std::shared_ptr<Snapshot>> snapshots;
};
Expected<DecodedRecording> decode_recording(std::string bytes);

}  // namespace memdiag::recording
