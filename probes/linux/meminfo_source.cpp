#include "probes/linux/meminfo_source.hpp"

namespace memdiag {

MeminfoSource::MeminfoSource(const std::string& procfs_root) : file_(procfs_root + "/meminfo") {}

Status MeminfoSource::probe() {
  if (!file_.exists()) return make_error(file_.path() + " does not exist");
  return Ok{};
}

Status MeminfoSource::sample(Snapshot& out) {
  auto text = file_.read();
  if (!text) return text.error();
  if (auto st = parse_meminfo(*text, entries_); !st) {
    return make_error(file_.path() + ": " + st.error().message);
  }
  FieldTable table;
  table.schema = schema_.intern(entries_, [](const MeminfoEntry& e) {
    return e.in_bytes ? FieldKind::kBytes : FieldKind::kCount;
  });
  table.values.reserve(entries_.size());
  for (const auto& e : entries_) table.values.push_back(e.value);
  out.meminfo = std::move(table);
  return Ok{};
}

}  // namespace memdiag
