// SPDX-License-Identifier: Apache-2.0
#include "probes/recording/recording_writer.hpp"

#include <bit>
#include <chrono>
#include <cmath>
#include <type_traits>

#include "probes/recording/snapshot_fields.hpp"
#include "probes/recording/varint.hpp"

namespace memdiag::recording {

class RecordingWriter::Encoder {
 public:
  // A frame's payload is built in `payload`; numbers go through put().
  void start_frame() {
    payload.clear();
    current_.clear();
  }
  void end_frame() { previous_.swap(current_); }
  // A writer always writes the newest format.
  std::uint64_t version() const { return kFormatVersion; }

  template <class T>
    requires std::is_integral_v<T>
  void integer(const T& v) {
    put(static_cast<std::uint64_t>(v));  // a negative value wraps; the reader checks it fits T
  }
  void boolean(const bool& v) { put(v ? 1 : 0); }
  // Sections hold finite numbers, and the reader refuses others (garbage would feed the models
  // NaNs); one that is not (none is known) is recorded as 0 so the file stays readable.
  void real(const double& v) { put(std::isfinite(v) ? std::bit_cast<std::uint64_t>(v) : 0); }
  template <class E>
  void enumeration(const E& v, E /*largest*/) {
    put(static_cast<std::uint64_t>(v));
  }
  void text(const std::string& v) { string(v); }
  void interned(const std::string_view& v) { string(v); }
  void time(const std::chrono::system_clock::time_point& t) {
    put(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count()));
  }
  void duration(const std::chrono::milliseconds& d) { put(static_cast<std::uint64_t>(d.count())); }
  template <class T, class F>
  void optional(const std::optional<T>& o, F&& f) {
    put(o ? 1 : 0);
    if (o) f(*o);
  }
  template <class T, class F>
  void sequence(const std::vector<T>& v, F&& f) {
    put(v.size());
    for (const T& e : v) f(e);
  }
  template <class T, std::size_t N, class F>
  void fixed(const std::array<T, N>& v, F&& f) {
    put(N);
    for (const T& e : v) f(e);
  }
  // Outside the numbers (raw varints and bytes), so a field list written again does not shift
  // the positions the next frame's numbers are compared at.
  void schema(int slot, const std::shared_ptr<const FieldSchema>& schema) {
    auto& last = schemas_.at(static_cast<std::size_t>(slot));
    const bool same = schema == last || (schema && last && *schema == *last);
    append_varint(payload, same ? 0 : 1);
    if (same) return;
    const FieldSchema empty;
    const FieldSchema& s = schema ? *schema : empty;
    append_varint(payload, s.names.size());
    for (std::size_t i = 0; i < s.names.size(); ++i) {
      append_varint(payload, s.names[i].size());
      payload += s.names[i];
      append_varint(payload, static_cast<std::uint64_t>(s.kinds[i]));
    }
    last = schema ? schema : std::make_shared<const FieldSchema>();
  }

  std::string payload;

 private:
  void put(std::uint64_t v) {
    const std::size_t i = current_.size();
    append_varint(payload, zigzag(v, i < previous_.size() ? previous_[i] : 0));
    current_.push_back(v);
  }
  void string(std::string_view s) {
    if (const auto it = strings_.find(std::string(s)); it != strings_.end()) {
      put(it->second);
      return;
    }
    const std::uint64_t index = strings_.size() + 1;
    put(index);
    append_varint(payload, s.size());
    payload.append(s);
    strings_.emplace(std::string(s), index);
  }

  std::vector<std::uint64_t> previous_, current_;
  std::unordered_map<std::string, std::uint64_t> strings_;
  std::array<std::shared_ptr<const FieldSchema>, 2> schemas_;
};

namespace {

std::string frame(FrameKind kind, const std::string& payload) {
  std::string out;
  out.reserve(payload.size() + 6);
  out.push_back(static_cast<char>(kind));
  append_varint(out, payload.size());
  out += payload;
  return out;
}

}  // namespace

std::string RecordingWriter::begin(const RecordingHeader& header) {
  encoder_ = std::make_shared<Encoder>();
  snapshots_ = 0;
  std::string out(kMagic);
  append_varint(out, kFormatVersion);
  encoder_->start_frame();
  fields(*encoder_, header);
  out += frame(FrameKind::kHeader, encoder_->payload);
  // Snapshots are not like the header: the first one starts from zeros, not from its numbers.
  encoder_->start_frame();
  encoder_->end_frame();
  return out;
}

std::string RecordingWriter::append(const Snapshot& snapshot) {
  encoder_->start_frame();
  fields(*encoder_, snapshot);
  encoder_->end_frame();
  ++snapshots_;
  return frame(FrameKind::kSnapshot, encoder_->payload);
}

std::string RecordingWriter::finish() const {
  std::string payload;
  append_varint(payload, snapshots_);
  return frame(FrameKind::kEnd, payload);
}

std::string encode_recording(const RecordingHeader& header, const std::vector<const Snapshot*>& snapshots) {
  RecordingWriter writer;
  std::string out = writer.begin(header);
  for (const Snapshot* s : snapshots) out += writer.append(*s);
  out += writer.finish();
  return out;
}

}  // namespace memdiag::recording
