// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/diagnosis_query.hpp"

#include <string>

#include "daemon/config_values.hpp"

namespace memdiag::http {

Expected<DiagnosisQuery> parse_diagnosis_query(std::string_view query) {
  DiagnosisQuery out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (name == "format") {
      if (value != "json" && value != "text") {
        return make_error("format must be json or text, not \"" + std::string(value) + "\"");
      }
      out.text = value == "text";
    } else if (name == "since") {
      auto since = parse_duration(value);
      if (!since) return make_error("since: " + since.error().message);
      out.since = *since;
    } else {
      return make_error("unknown parameter \"" + std::string(name) + "\" (format, since)");
    }
  }
  return out;
}

}  // namespace memdiag::http
