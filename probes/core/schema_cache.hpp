// SPDX-License-Identifier: Apache-2.0
// Keeps the FieldSchema of the last sample and hands it out again while the kernel prints
// the same fields in the same order (always, between boots), so a sample copies only numbers.
#pragma once

#include <memory>
#include <string>

#include "probes/core/field_table.hpp"

namespace memdiag {

class SchemaCache {
 public:
  // `entries` is a range of parser entries with a `name`; `kind_of(entry)` gives its FieldKind.
  template <class Entries, class KindOf>
  std::shared_ptr<const FieldSchema> intern(const Entries& entries, KindOf kind_of) {
    if (cached_ && matches(entries, kind_of)) return cached_;
    auto schema = std::make_shared<FieldSchema>();
    schema->names.reserve(entries.size());
    schema->kinds.reserve(entries.size());
    for (const auto& e : entries) {
      schema->names.emplace_back(e.name);
      schema->kinds.push_back(kind_of(e));
    }
    cached_ = std::move(schema);
    return cached_;
  }

 private:
  template <class Entries, class KindOf>
  bool matches(const Entries& entries, KindOf kind_of) const {
    if (cached_->size() != entries.size()) return false;
    std::size_t i = 0;
    for (const auto& e : entries) {
      if (cached_->names[i] != e.name || cached_->kinds[i] != kind_of(e)) return false;
      ++i;
    }
    return true;
  }

  std::shared_ptr<const FieldSchema> cached_;
};

}  // namespace memdiag
