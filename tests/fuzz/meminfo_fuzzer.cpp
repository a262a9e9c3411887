// SPDX-License-Identifier: Apache-2.0
// parse_meminfo on arbitrary bytes: never crashes, and whatever it accepts is a usable table.
#include <set>
#include <string_view>
#include <vector>

#include "probes/linux/node/meminfo_parser.hpp"
#include "probes/linux/text_scan.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using memdiag::fuzz::as_text;
using memdiag::fuzz::is_within;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view text = as_text(data, size);
  std::vector<memdiag::MeminfoEntry> entries;
  const memdiag::Status status = memdiag::parse_meminfo(text, entries);
  if (!status) {
    FUZZ_CHECK(!status.error().message.empty());  // a refusal must say why
    return 0;
  }

  FUZZ_CHECK(!entries.empty());
  FUZZ_CHECK(entries.size() <= memdiag::text::kMaxFields);
  std::set<std::string_view> names;
  for (const auto& e : entries) {
    FUZZ_CHECK(!e.name.empty());
    FUZZ_CHECK(is_within(e.name, text));  // views into the input, as documented
    FUZZ_CHECK(e.name.find_first_of(": \t\r\n") == std::string_view::npos);
    FUZZ_CHECK(names.insert(e.name).second);  // the exporter keys metrics by name
    if (e.in_bytes) FUZZ_CHECK(e.value % 1024 == 0);  // converted from whole kB
  }

  // The sampler reuses one vector across samples: a second parse into the filled vector
  // must give the same table, not append to it.
  const std::vector<memdiag::MeminfoEntry> first = entries;
  FUZZ_CHECK(memdiag::parse_meminfo(text, entries).ok());
  FUZZ_CHECK(entries.size() == first.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    FUZZ_CHECK(entries[i].name == first[i].name && entries[i].value == first[i].value &&
               entries[i].in_bytes == first[i].in_bytes);
  }
  return 0;
}
