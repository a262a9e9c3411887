// SPDX-License-Identifier: Apache-2.0
// parse_vmstat and vmstat_field_is_counter on arbitrary bytes: no crash, and an accepted
// file is a table of unique, metric-safe names.
#include <set>
#include <string_view>
#include <vector>

#include "probes/linux/text_scan.hpp"
#include "probes/linux/node/vmstat_parser.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using memdiag::fuzz::as_text;
using memdiag::fuzz::is_within;

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = as_text(data, size);

  // Classification must take any name, including ones from kernels not yet written; which
  // answer is right is the unit tests' business, not checkable here without restating the table.
  (void)memdiag::vmstat_field_is_counter(text);

  std::vector<memdiag::VmstatEntry> entries;
  const memdiag::Status status = memdiag::parse_vmstat(text, entries);
  if (!status) {
    FUZZ_CHECK(!status.error().message.empty());
    return 0;
  }

  FUZZ_CHECK(!entries.empty());
  FUZZ_CHECK(entries.size() <= memdiag::text::kMaxFields);
  std::set<std::string_view> names;
  for (const auto& e : entries) {
    FUZZ_CHECK(!e.name.empty());
    FUZZ_CHECK(is_within(e.name, text));
    for (char c : e.name) FUZZ_CHECK(is_name_char(c));  // the exporter may use it verbatim
    FUZZ_CHECK(names.insert(e.name).second);
    (void)memdiag::vmstat_field_is_counter(e.name);
  }

  // Reusing the vector (as the sampler does) must not change the result.
  const std::vector<memdiag::VmstatEntry> first = entries;
  FUZZ_CHECK(memdiag::parse_vmstat(text, entries).ok());
  FUZZ_CHECK(entries.size() == first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    FUZZ_CHECK(entries[i].name == first[i].name && entries[i].value == first[i].value);
  }
  return 0;
}
