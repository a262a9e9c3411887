// SPDX-License-Identifier: Apache-2.0
// parse_mountinfo and find_cgroup_mounts on arbitrary bytes: no crash, and an accepted table
// is one the kernel could have printed: re-escaping every entry and parsing again gives the
// same table, and the cgroup mounts found are the ones a plain reading of the table finds.
#include <string>
#include <string_view>
#include <vector>

#include "probes/linux/cgroup/mountinfo_parser.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

// The kernel's mangle(): space, tab, newline and backslash as three octal digits.
std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case ' ': out += "\\040"; break;
      case '\t': out += "\\011"; break;
      case '\n': out += "\\012"; break;
      case '\\': out += "\\134"; break;
      default: out += c;
    }
  }
  return out;
}

bool same(const memdiag::MountEntry& a, const memdiag::MountEntry& b) {
  return a.root == b.root && a.mount_point == b.mount_point && a.fs_type == b.fs_type &&
         a.super_options == b.super_options;
}

// Reference for the "memory" test: split the options on ',' into a vector.
bool lists_memory(const std::string& options) {
  std::vector<std::string> words(1);
  for (char c : options) {
    if (c == ',') words.emplace_back();
    else words.back() += c;
  }
  for (const std::string& w : words) {
    if (w == "memory") return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = memdiag::fuzz::as_text(data, size);
  std::vector<memdiag::MountEntry> mounts{memdiag::MountEntry{"/", "/stale", "ext4", "rw"}};
  const memdiag::Status status = memdiag::parse_mountinfo(text, mounts);
  if (!status) {
    FUZZ_CHECK(!status.error().message.empty());  // a refusal must say why
    FUZZ_CHECK(mounts.empty());                   // and leave nothing half-parsed
    return 0;
  }

  FUZZ_CHECK(!mounts.empty());
  FUZZ_CHECK(mounts.size() <= 100000);
  FUZZ_CHECK(text.back() == '\n');
  std::string canonical;
  for (const auto& m : mounts) {
    FUZZ_CHECK(!m.root.empty());
    FUZZ_CHECK(!m.mount_point.empty() && m.mount_point.front() == '/');
    FUZZ_CHECK(m.root.find('\0') == std::string::npos && m.mount_point.find('\0') == std::string::npos);
    FUZZ_CHECK(!m.fs_type.empty() && m.fs_type.find_first_of(" \n") == std::string::npos);
    FUZZ_CHECK(!m.super_options.empty() && m.super_options.find_first_of(" \n") == std::string::npos);
    canonical += "1 0 0:0 " + escape(m.root) + " " + escape(m.mount_point) + " rw shared:1 - " + m.fs_type +
                 " src " + m.super_options + "\n";
  }

  // Round trip through the kernel's spelling.
  std::vector<memdiag::MountEntry> again;
  FUZZ_CHECK(memdiag::parse_mountinfo(canonical, again).ok());
  FUZZ_CHECK(again.size() == mounts.size());
  for (std::size_t i = 0; i < mounts.size(); ++i) FUZZ_CHECK(same(again[i], mounts[i]));

  // The sampler may reuse one vector: parsing into the filled one gives the same table.
  FUZZ_CHECK(memdiag::parse_mountinfo(text, again).ok());
  FUZZ_CHECK(again.size() == mounts.size());
  for (std::size_t i = 0; i < mounts.size(); ++i) FUZZ_CHECK(same(again[i], mounts[i]));

  memdiag::CgroupMounts expected;
  bool v1 = false, v2 = false;
  for (const auto& m : mounts) {
    if (!v1 && m.fs_type == "cgroup" && lists_memory(m.super_options)) {
      expected.v1_memory = m.mount_point;
      v1 = true;
    }
    if (!v2 && m.fs_type == "cgroup2") {
      expected.v2 = m.mount_point;
      v2 = true;
    }
  }
  const memdiag::CgroupMounts found = memdiag::find_cgroup_mounts(mounts);
  FUZZ_CHECK(found.v1_memory == expected.v1_memory);
  FUZZ_CHECK(found.v2 == expected.v2);
  return 0;
}
