// SPDX-License-Identifier: Apache-2.0
#include "probes/recording/recording_reader.hpp"

#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <type_traits>

#include "probes/recording/snapshot_fields.hpp"
#include "probes/recording/varint.hpp"

namespace memdiag::recording {

namespace {

// The strings of a file, in order of first use. A deque: entries never move, so the
// string_views snapshots hold into it stay valid while more are added.
using StringTable = std::deque<std::string>;

// A snapshot with the string table its string_views point into.
struct OwnedSnapshot {
  Snapshot snapshot;
  std::shared_ptr<const StringTable> strings;
};

}  // namespace

// The reading side of snapshot_fields.hpp. The first problem is kept (with its byte offset) and
// every read after it gives zeros, so the field code needs no checks of its own; lists read as
// empty then, so garbage cannot make it allocate.
class RecordingReader::Decoder {
 public:
  explicit Decoder(std::uint64_t version) : version_(version), strings_(std::make_shared<StringTable>()) {}

  // The file's format version: fields added later are not in an older file's frames.
  std::uint64_t version() const { return version_; }

  void start_frame(std::string_view payload, std::size_t file_offset) {
    in_ = payload;
    pos_ = 0;
    offset_ = file_offset;
    current_.clear();
  }
  void end_frame() {
    if (!error_ && pos_ != in_.size()) fail("the frame has " + std::to_string(in_.size() - pos_) + " bytes left over");
    previous_.swap(current_);
  }
  const std::optional<std::string>& error() const { return error_; }
  std::shared_ptr<const StringTable> strings() const { return strings_; }

  template <class T>
    requires std::is_integral_v<T>
  void integer(T& v) {
    const std::uint64_t raw = get();
    if constexpr (std::is_signed_v<T>) {
      const auto s = static_cast<std::int64_t>(raw);
      if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max()) return fail("a number out of range");
      v = static_cast<T>(s);
    } else {
      if (raw > std::numeric_limits<T>::max()) return fail("a number out of range");
      v = static_cast<T>(raw);
    }
  }
  void boolean(bool& v) {
    const std::uint64_t raw = get();
    if (raw > 1) return fail("a flag that is neither 0 nor 1");
    v = raw == 1;
  }
  void real(double& v) {
    const double d = std::bit_cast<double>(get());
    if (!std::isfinite(d)) return fail("a number that is not finite");
    v = d;
  }
  template <class E>
  void enumeration(E& v, E largest) {
    const std::uint64_t raw = get();
    if (raw > static_cast<std::uint64_t>(largest)) return fail("an unknown kind " + std::to_string(raw));
    v = static_cast<E>(raw);
  }
  void text(std::string& v) {
    if (const std::string* s = string()) v = *s;
  }
  void interned(std::string_view& v) {
    if (const std::string* s = string()) v = *s;
  }
  void time(std::chrono::system_clock::time_point& t) {
    const auto ns = std::chrono::nanoseconds(static_cast<std::int64_t>(get()));
    t = std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(ns));
  }
  void duration(std::chrono::milliseconds& d) {
    const auto ms = static_cast<std::int64_t>(get());
    if (ms < 0) return fail("a negative duration");
    d = std::chrono::milliseconds(ms);
  }
  template <class T, class F>
  void optional(std::optional<T>& o, F&& f) {
    bool present = false;
    boolean(present);
    if (!present) {
      o.reset();
      return;
    }
    o.emplace();
    f(*o);
  }
  template <class T, class F>
  void sequence(std::vector<T>& v, F&& f) {
    const std::uint64_t n = count();
    v.clear();
    v.resize(static_cast<std::size_t>(n));
    for (T& e : v) f(e);
  }
  template <class T, std::size_t N, class F>
  void fixed(std::array<T, N>& v, F&& f) {
    const std::uint64_t n = get();
    if (!error_ && n != N) {
      return fail("a list of " + std::to_string(n) + " where this build has " + std::to_string(N) +
                  " (a recording of another build?)");
    }
    for (T& e : v) f(e);
  }
  // Outside the numbers, as the writer puts it.
  void schema(int slot, std::shared_ptr<const FieldSchema>& schema) {
    auto& last = schemas_.at(static_cast<std::size_t>(slot));
    const std::uint64_t changed = raw();
    if (error_) return;
    if (changed > 1) return fail("a field-list flag that is neither 0 nor 1");
    if (changed == 0) {
      if (!last) return fail("a field list that refers to an earlier one, but none came before");
      schema = last;
      return;
    }
    const std::uint64_t n = raw();
    if (!error_ && n > in_.size() - pos_) return fail("a field list of " + std::to_string(n) + " fields in the bytes left");
    auto fresh = std::make_shared<FieldSchema>();
    for (std::uint64_t i = 0; i < n && !error_; ++i) {
      const std::uint64_t length = raw();
      if (error_) break;
      if (length > in_.size() - pos_) return fail("a field name cut off");
      fresh->names.emplace_back(in_.substr(pos_, static_cast<std::size_t>(length)));
      pos_ += static_cast<std::size_t>(length);
      const std::uint64_t kind = raw();
      if (!error_ && kind > static_cast<std::uint64_t>(FieldKind::kGauge)) return fail("an unknown field kind");
      fresh->kinds.push_back(static_cast<FieldKind>(kind));
    }
    if (error_) return;
    last = fresh;
    schema = std::move(fresh);
  }

  void fail(const std::string& why) {
    if (!error_) error_ = why + " at byte " + std::to_string(offset_ + pos_);
  }

 private:
  std::uint64_t get() {
    if (error_) return 0;
    const auto raw = read_varint(in_, pos_);
    if (!raw) {
      fail("a number cut off or longer than 64 bits");
      return 0;
    }
    const std::size_t i = current_.size();
    const std::uint64_t v = unzigzag(*raw, i < previous_.size() ? previous_[i] : 0);
    current_.push_back(v);
    return v;
  }
  // A varint outside the numbers (not a difference from the previous frame).
  std::uint64_t raw() {
    if (error_) return 0;
    const auto v = read_varint(in_, pos_);
    if (!v) fail("a number cut off or longer than 64 bits");
    return v.value_or(0);
  }
  // A list's length: each entry takes at least one byte, so one longer than what is left of the
  // frame is garbage, and so is one longer than any source makes.
  std::uint64_t count() {
    const std::uint64_t n = get();
    if (!error_ && n > in_.size() - pos_) {
      fail("a list of " + std::to_string(n) + " entries in the " + std::to_string(in_.size() - pos_) + " bytes left");
    }
    if (!error_ && n > kMaxListEntries) {
      fail("a list of " + std::to_string(n) + " entries (at most " + std::to_string(kMaxListEntries) + ")");
    }
    return error_ ? 0 : n;
  }
  const std::string* string() {
    const std::uint64_t index = get();
    if (error_) return nullptr;
    if (index == strings_->size() + 1) {
      const auto length = read_varint(in_, pos_);
      if (!length || *length > kMaxStringBytes || *length > in_.size() - pos_) {
        fail("a string cut off or longer than " + std::to_string(kMaxStringBytes) + " bytes");
        return nullptr;
      }
      if (strings_->size() >= kMaxStrings) {
        fail("more than " + std::to_string(kMaxStrings) + " distinct strings");
        return nullptr;
      }
      strings_->emplace_back(in_.substr(pos_, static_cast<std::size_t>(*length)));
      pos_ += static_cast<std::size_t>(*length);
      return &strings_->back();
    }
    if (index == 0 || index > strings_->size()) {
      fail("string " + std::to_string(index) + " of " + std::to_string(strings_->size()));
      return nullptr;
    }
    return &(*strings_)[static_cast<std::size_t>(index - 1)];
  }

  std::uint64_t version_;
  std::string_view in_;
  std::size_t pos_ = 0;
  std::size_t offset_ = 0;  // of the payload in the file, for messages
  std::optional<std::string> error_;
  std::vector<std::uint64_t> previous_, current_;
  std::shared_ptr<StringTable> strings_;
  std::array<std::shared_ptr<const FieldSchema>, 2> schemas_;
};

namespace {

struct Frame {
  FrameKind kind;
  std::string_view payload;
  std::size_t payload_offset;
};

enum class FrameProblem { kNone, kEndOfFile, kTruncated, kMalformed };

// The frame at `pos`; kEndOfFile exactly at the end of the input.
FrameProblem read_frame(std::string_view bytes, std::size_t& pos, Frame& frame, std::string& why) {
  if (pos == bytes.size()) return FrameProblem::kEndOfFile;
  const std::size_t start = pos;
  const char kind = bytes[pos++];
  if (kind != static_cast<char>(FrameKind::kHeader) && kind != static_cast<char>(FrameKind::kSnapshot) &&
      kind != static_cast<char>(FrameKind::kEnd)) {
    why = "an unknown frame kind " + std::to_string(static_cast<unsigned char>(kind)) + " at byte " +
          std::to_string(start);
    return FrameProblem::kMalformed;
  }
  std::size_t length_at = pos;
  const auto length = read_varint(bytes, pos);
  if (!length) {
    if (pos >= bytes.size()) {
      why = "the file ends inside a frame's length at byte " + std::to_string(length_at);
      return FrameProblem::kTruncated;
    }
    why = "a frame length longer than 64 bits at byte " + std::to_string(length_at);
    return FrameProblem::kMalformed;
  }
  if (*length > kMaxFrameBytes) {
    why = "a frame of " + std::to_string(*length) + " bytes at byte " + std::to_string(start) + " (at most " +
          std::to_string(kMaxFrameBytes) + ")";
    return FrameProblem::kMalformed;
  }
  if (*length > bytes.size() - pos) {
    why = "the file ends inside the frame at byte " + std::to_string(start) + ": " + std::to_string(*length) +
          " bytes announced, " + std::to_string(bytes.size() - pos) + " there";
    return FrameProblem::kTruncated;
  }
  frame = Frame{static_cast<FrameKind>(kind), bytes.substr(pos, static_cast<std::size_t>(*length)), pos};
  pos += static_cast<std::size_t>(*length);
  return FrameProblem::kNone;
}

}  // namespace

Expected<RecordingReader> RecordingReader::open(std::string bytes) {
  RecordingReader reader;
  reader.bytes_ = std::move(bytes);
  const std::string_view in = reader.bytes_;
  if (in.substr(0, kMagic.size()) != kMagic) {
    if (kMagic.substr(0, in.size()) == in) return make_error("truncated: the file ends inside its first line");
    return make_error("not a memdiag recording (it does not start with \"MEMDIAG-RECORDING\")");
  }
  reader.pos_ = kMagic.size();
  const auto version = read_varint(in, reader.pos_);
  if (!version) return make_error("truncated: the file ends before its format version");
  if (*version < kOldestFormatVersion || *version > kFormatVersion) {
    return make_error("format version " + std::to_string(*version) + "; this memdiagd reads versions " +
                      std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion));
  }
  Frame frame{};
  std::string why;
  switch (read_frame(in, reader.pos_, frame, why)) {
    case FrameProblem::kNone: break;
    case FrameProblem::kEndOfFile: return make_error("truncated: the file ends before its header");
    case FrameProblem::kTruncated: return make_error("truncated: " + why);
    case FrameProblem::kMalformed: return make_error(why);
  }
  if (frame.kind != FrameKind::kHeader) return make_error("the first frame is not the header");
  reader.decoder_ = std::make_shared<Decoder>(*version);
  reader.decoder_->start_frame(frame.payload, frame.payload_offset);
  fields(*reader.decoder_, reader.header_);
  reader.decoder_->end_frame();
  if (reader.decoder_->error()) return make_error("malformed header: " + *reader.decoder_->error());
  // Snapshots start from zeros, not from the header's numbers (as the writer does).
  reader.decoder_->start_frame({}, reader.pos_);
  reader.decoder_->end_frame();
  return reader;
}

Expected<std::optional<std::shared_ptr<Snapshot>>> RecordingReader::next() {
  if (ended_) return std::optional<std::shared_ptr<Snapshot>>();
  const std::string_view in = bytes_;
  Frame frame{};
  std::string why;
  const std::string after = " after " + std::to_string(snapshots_) + " complete snapshots";
  switch (read_frame(in, pos_, frame, why)) {
    case FrameProblem::kNone: break;
    case FrameProblem::kEndOfFile:
      truncated_ = true;
      return make_error("truncated: the file ends" + after + " without the end mark (the recorder did not finish)");
    case FrameProblem::kTruncated:
      truncated_ = true;
      return make_error("truncated: " + why + after);
    case FrameProblem::kMalformed: return make_error(why);
  }
  if (frame.kind == FrameKind::kEnd) {
    std::size_t p = 0;
    const auto count = read_varint(frame.payload, p);
    if (!count || p != frame.payload.size()) return make_error("a malformed end mark at byte " + std::to_string(frame.payload_offset));
    if (*count != snapshots_) {
      return make_error("the end mark counts " + std::to_string(*count) + " snapshots, the file has " +
                        std::to_string(snapshots_));
    }
    if (pos_ != in.size()) return make_error(std::to_string(in.size() - pos_) + " bytes after the end mark");
    ended_ = true;
    return std::optional<std::shared_ptr<Snapshot>>();
  }
  if (frame.kind != FrameKind::kSnapshot) return make_error("a second header at byte " + std::to_string(frame.payload_offset));

  auto owned = std::make_shared<OwnedSnapshot>();
  decoder_->start_frame(frame.payload, frame.payload_offset);
  fields(*decoder_, owned->snapshot);
  decoder_->end_frame();
  if (decoder_->error()) return make_error("malformed snapshot " + std::to_string(snapshots_ + 1) + ": " + *decoder_->error());
  owned->strings = decoder_->strings();
  if (owned->snapshot.taken_at < last_taken_at_ && snapshots_ > 0) {
    return make_error("snapshot " + std::to_string(snapshots_ + 1) + " was taken before the one ahead of it");
  }
  last_taken_at_ = owned->snapshot.taken_at;
  ++snapshots_;
  return std::optional<std::shared_ptr<Snapshot>>(std::shared_ptr<Snapshot>(owned, &owned->snapshot));
}

Expected<DecodedRecording> decode_recording(std::string bytes) {
  auto reader = RecordingReader::open(std::move(bytes));
  if (!reader) return reader.error();
  DecodedRecording out;
  out.header = reader->header();
  for (;;) {
    auto next = reader->next();
    if (!next) return next.error();
    if (!*next) break;
    out.snapshots.push_back(std::move(**next));
  }
  return out;
}

}  // namespace memdiag::recording
