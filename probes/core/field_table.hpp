// SPDX-License-Identifier: Apache-2.0
// A kernel "name value" file (meminfo, vmstat) as sampled: values in kernel order, with the
// names held in a schema that is shared between snapshots while the kernel's field set stays
// the same. Sharing the schema keeps a sample allocation-light and lets the exporter cache
// the metric names it derives from it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memdiag {

enum class FieldKind : std::uint8_t {
  kBytes,    // meminfo field with a kB unit, stored converted to bytes
  kCount,    // meminfo field without unit (HugePages_*): a number of pages
  kCounter,  // vmstat event counter: only goes up (until reboot)
  kGauge,    // vmstat nr_* level
};

struct FieldSchema {
  std::vector<std::string> names;
  std::vector<FieldKind> kinds;

  std::size_t size() const { return names.size(); }

  bool operator==(const FieldSchema&) const = default;
};

struct FieldTable {
  std::shared_ptr<const FieldSchema> schema;
  std::vector<std::uint64_t> values;

  // Linear lookup: for analysis code and tests, not for per-field loops.
  std::optional<std::uint64_t> get(std::string_view name) const {
    if (!schema) return std::nullopt;
    for (std::size_t i = 0; i < schema->names.size(); ++i) {
      if (schema->names[i] == name) return values[i];
    }
    return std::nullopt;
  }

  // The same fields with the same values, whether the schema is shared or an equal copy (a
  // table read back from a recording has its own).
  friend bool operator==(const FieldTable& a, const FieldTable& b) {
    const bool same_schema = a.schema == b.schema || (a.schema && b.schema && *a.schema == *b.schema);
    return same_schema && a.values == b.values;
  }
};

}  // namespace memdiag
