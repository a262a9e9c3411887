// SPDX-License-Identifier: Apache-2.0
#include "exporters/report/history_json.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>

#include "exporters/report/json_writer.hpp"
#include "probes/analysis/snapshot_window.hpp"
#include "probes/analysis/vmstat_index.hpp"

namespace memdiag::report {

namespace {

using Column = std::vector<std::optional<double>>;

std::optional<double> rounded(std::optional<double> value, double per_unit) {
  if (!value) return std::nullopt;
  return std::round(*value * per_unit) / per_unit;
}

std::optional<double> level_of(const std::optional<StallVerdict>& verdict) {
  if (!verdict) return std::nullopt;
  return static_cast<double>(verdict->level);
}

std::optional<double> level_of(const std::optional<OvercommitVerdict>& verdict) {
  if (!verdict) return std::nullopt;
  return static_cast<double>(verdict->level);
}

std::optional<double> bytes(const std::optional<std::uint64_t>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

const PsiResource* memory_pressure(const Snapshot& s) {
  if (!s.pressure) return nullptr;
  const auto& memory = s.pressure->resources[static_cast<std::size_t>(PsiResourceKind::kMemory)];
  return memory ? &*memory : nullptr;
}

std::optional<double> psi_some_seconds(const Snapshot& s) {
  const PsiResource* memory = memory_pressure(s);
  if (memory == nullptr) return std::nullopt;
  return static_cast<double>(memory->some.total_us) / 1e6;
}

std::optional<double> psi_full_seconds(const Snapshot& s) {
  const PsiResource* memory = memory_pressure(s);
  if (memory == nullptr || !memory->full) return std::nullopt;
  return static_cast<double>(memory->full->total_us) / 1e6;
}

// Stall seconds per second, at most 1 (the two reads of a counter are not exactly as far apart
// as the snapshots' times).
std::optional<double> stall_share(std::optional<double> rate) {
  if (!rate) return std::nullopt;
  return std::min(*rate, 1.0);
}

void write_column(JsonWriter& w, std::string_view name, const Column& column) {
  w.key(name);
  w.begin_array();
  for (const std::optional<double>& value : column) {
    if (value && *value >= 0 && *value < 0x1p53 && *value == std::floor(*value)) {
      w.integer(static_cast<std::uint64_t>(*value));  // 8000000000, not 8e+09
    } else if (value) {
      w.number(*value);
    } else {
      w.null();
    }
  }
  w.end_array();
}

}  // namespace

std::string render_history_json(const std::vector<SnapshotPtr>& ring) {
  std::vector<const Snapshot*> snapshots;
  snapshots.reserve(ring.size());
  for (const SnapshotPtr& s : ring) {
    if (s) snapshots.push_back(s.get());
  }
  const std::size_t n = snapshots.size();
  Column stall(n), overcommit(n), psi_some(n), psi_full(n), available(n), commit_charge(n), commit_limit(n),
      direct_scan(n), refaults(n), pages_input(n);
  analysis::VmstatIndex vmstat;
  const auto pgscan_direct = [&](const Snapshot& x) { return vmstat.get(x, analysis::VmstatIndex::kPgscanDirect); };
  const auto refault_file = [&](const Snapshot& x) {
    auto file = vmstat.get(x, analysis::VmstatIndex::kWorkingsetRefaultFile);
    return file ? file : vmstat.get(x, analysis::VmstatIndex::kWorkingsetRefault);
  };
  const auto windows_pages_input = [](const Snapshot& x) -> std::optional<double> {
    if (!x.windows_paging) return std::nullopt;
    return bytes(x.windows_paging->pages_input_total);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Snapshot& s = *snapshots[i];
    stall[i] = level_of(s.derived.stall);
    overcommit[i] = level_of(s.derived.overcommit);
    if (s.system_memory) {
      available[i] = static_cast<double>(s.system_memory->physical_available_bytes);
      commit_charge[i] = bytes(s.system_memory->commit_charge_bytes);
      commit_limit[i] = bytes(s.system_memory->commit_limit_bytes);
    }
    if (i == 0) continue;  // rates need the snapshot before
    const Snapshot& before = *snapshots[i - 1];
    psi_some[i] = rounded(stall_share(analysis::rate(before, s, psi_some_seconds)), 1e4);
    psi_full[i] = rounded(stall_share(analysis::rate(before, s, psi_full_seconds)), 1e4);
    direct_scan[i] = rounded(analysis::rate(before, s, pgscan_direct), 10);
    refaults[i] = rounded(analysis::rate(before, s, refault_file), 10);
    pages_input[i] = rounded(analysis::rate(before, s, windows_pages_input), 10);
  }

  std::string out;
  out.reserve(64 + n * 100);
  JsonWriter w(out);
  w.begin_object();
  w.field("schema", kHistorySchema);
  w.key("taken_at_ms");
  w.begin_array();
  for (const Snapshot* s : snapshots) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(s->taken_at.time_since_epoch()).count();
    w.integer(static_cast<std::uint64_t>(std::max<decltype(ms)>(ms, 0)));
  }
  w.end_array();
  write_column(w, "stall_level", stall);
  write_column(w, "overcommit_level", overcommit);
  write_column(w, "psi_some_ratio", psi_some);
  write_column(w, "psi_full_ratio", psi_full);
  write_column(w, "available_bytes", available);
  write_column(w, "commit_charge_bytes", commit_charge);
  write_column(w, "commit_limit_bytes", commit_limit);
  write_column(w, "direct_scan_pages_per_second", direct_scan);
  write_column(w, "refault_file_pages_per_second", refaults);
  write_column(w, "pages_input_per_second", pages_input);
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace memdiag::report
