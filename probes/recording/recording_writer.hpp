// SPDX-License-Identifier: Apache-2.0
// Turns snapshots into a recording (recording_format.hpp), frame by frame, so a recorder can
// write each to disk as it is taken and a recording cut short keeps what came before. Pure: it
// builds bytes; the caller writes them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "probes/core/snapshot.hpp"
#include "probes/recording/recording_format.hpp"

namespace memdiag::recording {

class RecordingWriter {
 public:
  // The magic, the version and the header frame: the first bytes of the file.
  std::string begin(const RecordingHeader& header);
  // One snapshot frame. Call in the order the snapshots were taken, after begin().
  std::string append(const Snapshot& snapshot);
  // The end mark, after the last snapshot.
  std::string finish() const;

  std::uint64_t snapshots() const { return snapshots_; }

  // What a frame's fields go through: the numbers of the previous frame, the strings and
  // field lists already written. Public for the templates of snapshot_fields.hpp.
  class Encoder;

 private:
  std::shared_ptr<Encoder> encoder_;
  std::uint64_t snapshots_ = 0;
};

// A whole recording in one go (tests, the fuzz target, the daemon's ring).
std::string encode_recording(const RecordingHeader& header, const std::vector<const Snapshot*>& snapshots);

}  // namespace memdiag::recording
