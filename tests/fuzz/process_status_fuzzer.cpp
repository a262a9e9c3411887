// SPDX-License-Identifier: Apache-2.0
// The /proc process scanner's parsers on arbitrary bytes: parse_process_status,
// memory_cgroup_of (v1 and v2), unescape_process_name and classify_maps (/proc/PID/maps); and the eBPF loader's reading of its
// own status (parse_bpf_permission_footing), the same file. Whatever they accept must be what
// the scanner may put in a record: views into the input, whole kB in bytes, a bounded name.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "probes/bpf/bpf_permission_hint.hpp"
#include "probes/linux/process/process_status_parser.hpp"
#include "probes/linux/process/promise_not_due.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using memdiag::fuzz::as_text;
using memdiag::fuzz::is_within;

namespace {

// A field the parser accepted holds what its line says: the kB number of the one "Name:" line
// in bytes, or 0 when there is no such line.
void check_field_round_trip(std::string_view text, std::string_view field, std::uint64_t bytes) {
  std::uint64_t expected = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() <= field.size() || line.substr(0, field.size()) != field || line[field.size()] != ':') continue;
    std::uint64_t kb = 0;
    for (char c : line.substr(field.size() + 1)) {
      if (c >= '0' && c <= '9') kb = kb * 10 + static_cast<std::uint64_t>(c - '0');
    }
    expected = kb * 1024;
  }
  FUZZ_CHECK(bytes == expected);
}

void check_status(std::string_view text) {
  const auto status = memdiag::parse_process_status(text);
  if (!status) {
    FUZZ_CHECK(!status.error().message.empty());  // a refusal must say why
    return;
  }
  FUZZ_CHECK(is_within(status->name, text));
  FUZZ_CHECK(status->name.find('\n') == std::string_view::npos);
  FUZZ_CHECK(status->tgid > 0);
  for (auto bytes : {status->virtual_bytes, status->rss_anon_bytes, status->rss_file_bytes,
                     status->rss_shmem_bytes, status->swap_bytes, status->data_bytes, status->stack_bytes}) {
    FUZZ_CHECK(bytes % 1024 == 0);  // converted from whole kB
  }
  if (!status->has_mm) FUZZ_CHECK(status->virtual_bytes == 0);
  // VmData and VmStk are read as given: the scanner adds them, the parser does not.
  check_field_round_trip(text, "VmData", status->data_bytes);
  check_field_round_trip(text, "VmStk", status->stack_bytes);
  // Accepted text ends in a newline: a cut-short file is refused, never half-read.
  FUZZ_CHECK(!text.empty() && text.back() == '\n');
}

void check_cgroup(std::string_view text, memdiag::CgroupVersion version) {
  const auto path = memdiag::memory_cgroup_of(text, version);
  if (!path) {
    FUZZ_CHECK(!path.error().message.empty());
    return;
  }
  FUZZ_CHECK(is_within(*path, text));
  FUZZ_CHECK(!path->empty() && path->front() == '/');
  FUZZ_CHECK(path->find('\n') == std::string_view::npos);
}

// The kernel's escaping undone the slow, obvious way, to compare with.
std::string reference_unescape(std::string_view escaped, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < escaped.size() && out.size() < limit; ++i) {
    if (escaped.substr(i, 2) == "\\n") {
      out += '\n';
      ++i;
    } else if (escaped.substr(i, 2) == "\\\\") {
      out += '\\';
      ++i;
    } else {
      out += escaped[i];
    }
  }
  return out;
}

void check_unescape(std::string_view escaped) {
  // A guard byte after the record-sized buffer: writing past out_size trips it (and ASan).
  char out[17];
  std::memset(out, '#', sizeof out);
  memdiag::unescape_process_name(escaped, out, 16);
  FUZZ_CHECK(out[16] == '#');
  const std::size_t n = std::strlen(out);  // NUL-terminated within the 16 bytes
  FUZZ_CHECK(n <= 15);
  const std::string expected = reference_unescape(escaped, 15);
  // A NUL in the input ends the C string early; compare up to it.
  FUZZ_CHECK(std::string_view(out, n) == std::string_view(expected).substr(0, expected.find('\0')));
}

// An accepted footing holds the mask of the last "CapEff:" line (read by strtoull, base 16) and
// modes of 0..2; every footing gives a hint.
void check_footing(std::string_view text) {
  const auto footing = memdiag::parse_bpf_permission_footing(text);
  if (!footing) {
    FUZZ_CHECK(!footing.error().message.empty());
    return;
  }
  FUZZ_CHECK(footing->seccomp_mode >= 0 && footing->seccomp_mode <= 2);
  std::string last;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, 7) == "CapEff:") last = std::string(line.substr(7));
  }
  FUZZ_CHECK(!last.empty());
  FUZZ_CHECK(std::strtoull(last.c_str(), nullptr, 16) == footing->effective_capabilities);
  FUZZ_CHECK(!memdiag::bpf_permission_hint(*footing).empty());
}

// What classify_maps accepts adds up: each kind at most the mappings' whole span, and a stack
// needs a guard line before it.
void check_maps(std::string_view text) {
  const auto not_due = memdiag::classify_maps(text);
  if (!not_due) {
    FUZZ_CHECK(!not_due.error().message.empty());
    return;
  }
  // Empty is a maps file too (a kernel thread's); anything else accepted ends its last line.
  FUZZ_CHECK(text.empty() || text.back() == '\n');
  if (text.empty()) FUZZ_CHECK(not_due->mappings == 0 && not_due->total() == 0);
  std::uint64_t lines = 0;
  for (char c : text) lines += c == '\n';
  FUZZ_CHECK(not_due->mappings <= lines);
  if (not_due->mappings < 2) FUZZ_CHECK(not_due->thread_stack_bytes == 0);
  FUZZ_CHECK(not_due->total() >= not_due->private_file_bytes);  // no wrap-around
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  check_status(text);
  check_cgroup(text, memdiag::CgroupVersion::kV1);
  check_cgroup(text, memdiag::CgroupVersion::kV2);
  check_unescape(text);
  check_footing(text);
  check_maps(text);
  return 0;
}
