// SPDX-License-Identifier: Apache-2.0
// A source for a kernel "name value" file that becomes a FieldTable section of the snapshot
// (meminfo, vmstat): read, parse with the file's pure parser, share the schema between samples,
// copy the numbers. The files differ only in parser, field kinds and section.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/schema_cache.hpp"
#include "probes/core/source.hpp"
#include "probes/linux/kernel_file.hpp"

namespace memdiag {

template <class Entry>
class FieldTableSource final : public Source {
 public:
  using Parse = Status (*)(std::string_view text, std::vector<Entry>& out);
  using KindOf = FieldKind (*)(const Entry& entry);
  using Section = std::optional<FieldTable> Snapshot::*;
  // Fills an OS-neutral section from the same table (meminfo: system memory), if given.
  using AlsoFill = std::function<void(const FieldTable& table, Snapshot& out)>;

  FieldTableSource(std::string_view name, KernelFile file, Parse parse, KindOf kind_of, Section section,
                   AlsoFill also_fill = {})
      : name_(name),
        file_(std::move(file)),
        parse_(parse),
        kind_of_(kind_of),
        section_(section),
        also_fill_(std::move(also_fill)) {}

  std::string_view name() const override { return name_; }

  Status probe() override {
    if (!file_.exists()) return make_error(file_.path() + " does not exist");
    return Ok{};
  }

  Status sample(Snapshot& out) override {
    auto text = file_.read();
    if (!text) return text.error();
    if (auto st = parse_(*text, entries_); !st) return make_error(file_.path() + ": " + st.error().message);
    FieldTable table;
    table.schema = schema_.intern(entries_, kind_of_);
    table.values.reserve(entries_.size());
    for (const auto& e : entries_) table.values.push_back(e.value);
    if (also_fill_) also_fill_(table, out);
    out.*section_ = std::move(table);
    return Ok{};
  }

 private:
  std::string_view name_;
  KernelFile file_;
  Parse parse_;
  KindOf kind_of_;
  Section section_;
  AlsoFill also_fill_;
  std::vector<Entry> entries_;  // reused between samples
  SchemaCache schema_;
};

}  // namespace memdiag
