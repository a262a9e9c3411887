// SPDX-License-Identifier: Apache-2.0
// parse_config on arbitrary text: it must return a value (never throw, never crash), and a
// config it accepts must pass every check the loader promises, because the daemon starts
// from it without validating again.
#include <string>
#include <string_view>

#include "daemon/config.hpp"
#include "daemon/config_values.hpp"
#include "probes/catalog/source_catalog.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string file = "fuzz.yaml";
  // An exception escaping here is reported by libFuzzer as a crash: the contract is
  // "errors as values".
  const memdiag::ConfigResult result = memdiag::parse_config(memdiag::fuzz::as_text(data, size), file);
  if (!result) {
    const memdiag::ConfigError& e = result.error();
    FUZZ_CHECK(e.file == file);
    FUZZ_CHECK(e.line >= 0);
    FUZZ_CHECK(!e.reason.empty());
    FUZZ_CHECK(!e.to_string().empty());
    return 0;
  }

  const memdiag::Config& c = *result;
  FUZZ_CHECK(c.file == file);
  FUZZ_CHECK(memdiag::check_listen_address(c.listen_address).ok());
  FUZZ_CHECK(memdiag::check_directory_path(c.paths.procfs).ok());
  FUZZ_CHECK(memdiag::check_directory_path(c.paths.sysfs).ok());
  FUZZ_CHECK(memdiag::check_interval(c.interval).ok());
  FUZZ_CHECK(memdiag::check_ring(static_cast<long long>(c.ring)).ok());
  FUZZ_CHECK(memdiag::check_log_level(c.log_level).ok());
  // Exactly the known sources, so the daemon never looks up a name it cannot build.
  FUZZ_CHECK(c.sources.size() == memdiag::source_catalog().size());
  for (const auto& source : memdiag::source_catalog()) {
    FUZZ_CHECK(c.sources.count(source.name) == 1);
    // Options of the type the registration declares (another type would throw here).
    const auto& options = c.sources.find(source.name)->second.options;
    FUZZ_CHECK(source.same_options(options, options));
  }
  return 0;
}
