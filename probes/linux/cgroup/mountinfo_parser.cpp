// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/mountinfo_parser.hpp"

#include "probes/linux/text_scan.hpp"

namespace memdiag {
namespace {

// A busy Kubernetes node has a few thousand mounts; a table far beyond that is garbage or
// hostile, and parsing all of it would only grow the daemon's memory.
constexpr text::LineLimit kMountLimit{100000, "more mounts than any host has"};

// Fields of one line. The kernel (show_mountinfo) separates fields with exactly one space and
// escapes spaces inside them, so fields are split on single spaces, not on runs of whitespace:
// an empty field is real (a mount whose source is "" prints "- tmpfs  rw").
class FieldCursor {
 public:
  explicit FieldCursor(std::string_view line) : rest_(line) {}

  bool next(std::string_view& field) {
    if (done_) return false;
    const std::size_t space = rest_.find(' ');
    if (space == std::string_view::npos) {
      field = rest_;
      done_ = true;
    } else {
      field = rest_.substr(0, space);
      rest_.remove_prefix(space + 1);
    }
    return true;
  }

 private:
  std::string_view rest_;
  bool done_ = false;
};

// "major:minor", both decimal.
bool is_device_number(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  return text::parse_u64(s.substr(0, colon)).ok() && text::parse_u64(s.substr(colon + 1)).ok();
}

// Undoes the kernel's mangle(): space, tab, newline and backslash appear as \ooo (three octal
// digits). The kernel never writes a lone backslash, so one is an error rather than a guess;
// so is \000, which no path can hold and which would cut the path short in open().
bool unescape(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\') {
      out += in[i];
      continue;
    }
    if (in.size() - i < 4) return false;
    unsigned value = 0;
    for (std::size_t k = 1; k <= 3; ++k) {
      const char d = in[i + k];
      if (d < '0' || d > '7') return false;
      value = value * 8 + static_cast<unsigned>(d - '0');
    }
    if (value == 0 || value > 0xff) return false;
    out += static_cast<char>(value);
    i += 3;
  }
  return true;
}

Status parse_line(const text::Line& line, MountEntry& entry) {
  // No path or option can hold a NUL, so the kernel never prints one; a path with one would
  // be cut short at the first open().
  if (line.text.find('\0') != std::string_view::npos) return line.error("NUL byte");
  FieldCursor fields(line.text);
  std::string_view id, parent, device, root, mount_point, mount_options;
  if (!fields.next(id) || !fields.next(parent) || !fields.next(device) || !fields.next(root) ||
      !fields.next(mount_point) || !fields.next(mount_options)) {
    return line.error("too few fields");
  }
  if (!text::parse_u64(id) || !text::parse_u64(parent)) {
    return line.error("mount id and parent id must be numbers");
  }
  if (!is_device_number(device)) return line.error("expected 'major:minor'");
  if (root.empty() || mount_options.empty()) return line.error("empty field");
  // Mounts outside the reader's root are left out by the kernel, so every mount point it
  // prints is absolute. The root need not be: nsfs mounts show "net:[4026531993]".
  if (mount_point.empty() || mount_point.front() != '/') {
    return line.error("mount point is not an absolute path");
  }

  // Optional fields ("shared:1", "master:2", "unbindable", ...), as many as the kernel likes,
  // up to the separator; proc(5) tells parsers to skip the ones they do not know.
  std::string_view field;
  bool separated = false;
  while (fields.next(field)) {
    if (field == "-") {
      separated = true;
      break;
    }
    if (field.empty()) return line.error("empty optional field");
  }
  if (!separated) return line.error("no ' - ' separator");

  std::string_view fs_type, source, super_options;
  if (!fields.next(fs_type) || !fields.next(source) || !fields.next(super_options)) {
    return line.error("too few fields after ' - '");
  }
  // Super options always start with "rw" or "ro"; a type is never empty.
  if (fs_type.empty() || super_options.empty()) return line.error("empty field");
  if (fields.next(field)) return line.error("unexpected field after the super options");
  // A CRLF copy would otherwise leave "\r" on the super options and hide "memory" from
  // find_cgroup_mounts without a word.
  if (super_options.back() == '\r') {
    return line.error("line ends in a carriage return (not kernel output)");
  }

  if (!unescape(root, entry.root)) return line.error("bad escape in root");
  if (!unescape(mount_point, entry.mount_point)) {
    return line.error("bad escape in mount point");
  }
  entry.fs_type.assign(fs_type);
  entry.super_options.assign(super_options);
  return Ok{};
}

Status parse_all(std::string_view text, std::vector<MountEntry>& out) {
  auto st = text::for_each_line(text, kMountLimit, [&out](const text::Line& line) {
    out.emplace_back();
    return parse_line(line, out.back());
  });
  if (!st) return st;
  // Every mount namespace has at least its root mount: nothing at all means the read failed.
  if (out.empty()) return make_error("no mounts (empty or blank file)");
  return Ok{};
}

// Whether `name` is one of the comma-separated words of `options` (so "memory" does not
// match "memory_recursiveprot").
bool has_option(std::string_view options, std::string_view name) {
  while (true) {
    const std::size_t comma = options.find(',');
    if (options.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) return false;
    options.remove_prefix(comma + 1);
  }
}

}  // namespace

Status parse_mountinfo(std::string_view text, std::vector<MountEntry>& out) {
  out.clear();
  Status st = parse_all(text, out);
  if (!st) out.clear();  // nothing half-parsed reaches a caller that ignores the status
  return st;
}

CgroupMounts find_cgroup_mounts(const std::vector<MountEntry>& mounts) {
  CgroupMounts found;
  bool have_v1 = false;
  bool have_v2 = false;
  for (const MountEntry& m : mounts) {
    if (!have_v1 && m.fs_type == "cgroup" && has_option(m.super_options, "memory")) {
      found.v1_memory = m.mount_point;
      found.v1_memory_root = m.root;
      have_v1 = true;
    } else if (!have_v2 && m.fs_type == "cgroup2") {
      found.v2 = m.mount_point;
      found.v2_root = m.root;
      have_v2 = true;
    }
    if (have_v1 && have_v2) break;
  }
  return found;
}

}  // namespace memdiag
