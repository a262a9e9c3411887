#include "probes/linux/vmstat_source.hpp"

namespace memdiag {

VmstatSource::VmstatSource(const std::string& procfs_root) : file_(procfs_root + "/vmstat") {}

Status VmstatSource::probe() {
  if (!file_.exists()) return make_error(file_.path() + " does not exist");
  return Ok{};
}

Status VmstatSource::sample(Snapshot& out) {
  auto text = file_.read();
  if (!text) return text.error();
  if (auto st = parse_vmstat(*text, entries_); !st) {
    return make_error(file_.path() + ": " + st.error().message);
  }
  FieldTable table;
  table.schema = schema_.intern(entries_, [](const VmstatEntry& e) {
    return vmstat_field_is_counter(e.name) ? FieldKind::kCounter : FieldKind::kGauge;
  });
  table.values.reserve(entries_.size());
  for (const auto& e : entries_) table.values.push_back(e.value);
  out.vmstat = std::move(table);
  return Ok{};
}

}  // namespace memdiag
