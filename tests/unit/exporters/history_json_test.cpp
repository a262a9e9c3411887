// SPDX-License-Identifier: Apache-2.0
// /api/v1/history (exporters/report/history_json): the key signals of the ring's snapshots as
// parallel arrays, rates from the counters' deltas between consecutive snapshots, null (never
// 0) where a snapshot lacks the source or a counter went down, and small enough for a ring of
// 300.
#include "exporters/report/history_json.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace memdiag::report {
namespace {

using std::chrono::milliseconds;

std::shared_ptr<const FieldSchema> vmstat_schema(std::vector<std::string> names) {
  auto schema = std::make_shared<FieldSchema>();
  for (std::string& name : names) {
    schema->names.push_back(std::move(name));
    schema->kinds.push_back(FieldKind::kCounter);
  }
  return schema;
}

const std::shared_ptr<const FieldSchema> kVmstat = vmstat_schema({"nr_free_pages", "pgscan_direct",
                                                                   "workingset_refault_anon", "workingset_refault_file"});

std::shared_ptr<Snapshot> at_ms(std::int64_t ms) {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = std::chrono::system_clock::time_point(milliseconds(ms));
  return s;
}

void set_psi(Snapshot& s, std::uint64_t some_us, std::uint64_t full_us) {
  PressureSection pressure;
  PsiResource memory;
  memory.some.total_us = some_us;
  memory.full = PsiLine{};
  memory.full->total_us = full_us;
  pressure.resources[static_cast<std::size_t>(PsiResourceKind::kMemory)] = memory;
  s.pressure = pressure;
}

void set_vmstat(Snapshot& s, std::uint64_t pgscan_direct, std::uint64_t refault_file) {
  s.vmstat = FieldTable{kVmstat, {12345, pgscan_direct, 7, refault_file}};
}

void set_levels(Snapshot& s, VerdictLevel stall, VerdictLevel overcommit) {
  StallVerdict v;
  v.level = stall;
  s.derived.stall = v;
  OvercommitVerdict o;
  o.level = overcommit;
  s.derived.overcommit = o;
}

SystemMemory memory(std::uint64_t available, std::optional<std::uint64_t> charge,
                    std::optional<std::uint64_t> limit) {
  SystemMemory m;
  m.physical_total_bytes = 16ull << 30;
  m.physical_available_bytes = available;
  m.commit_charge_bytes = charge;
  m.commit_limit_bytes = limit;
  return m;
}

TEST(HistoryJson, ValuesRatesAndNullsWhereASourceIsMissingOrACounterWentDown) {
  auto a = at_ms(1'000'000);
  set_levels(*a, VerdictLevel::kLow, VerdictLevel::kNone);
  a->system_memory = memory(4294967296, 6442450944, 8589934592);
  set_psi(*a, 1'000'000, 500'000);
  set_vmstat(*a, 1000, 50);

  auto b = at_ms(1'002'000);  // 2 s later
  set_levels(*b, VerdictLevel::kMedium, VerdictLevel::kLow);
  b->system_memory = memory(4000000000, 6500000000, 8589934592);
  set_psi(*b, 1'500'000, 600'000);  // 0.5 s and 0.1 s of stall in 2 s
  set_vmstat(*b, 3000, 51);         // 2000 pages and 1 page in 2 s

  auto c = at_ms(1'003'000);  // 1 s later: PSI down, no verdicts, no commit figures
  c->system_memory = memory(3000000000, std::nullopt, std::nullopt);
  set_vmstat(*c, 10, 61);  // pgscan_direct went down (reset): no rate; 10 refaults in 1 s

  const std::string json = render_history_json({a, b, c});
  EXPECT_EQ(json,
            R"({"schema":"memdiag.history/v1","taken_at_ms":[1000000,1002000,1003000],)"
            R"("stall_level":[1,2,null],"overcommit_level":[0,1,null],)"
            R"("psi_some_ratio":[null,0.25,null],"psi_full_ratio":[null,0.05,null],)"
            R"("available_bytes":[4294967296,4000000000,3000000000],)"
            R"("commit_charge_bytes":[6442450944,6500000000,null],"commit_limit_bytes":[8589934592,8589934592,null],)"
            R"("direct_scan_pages_per_second":[null,1000,null],"refault_file_pages_per_second":[null,0.5,10],)"
            R"("pages_input_per_second":[null,null,null]})"
            "\n");
}

TEST(HistoryJson, APsiCounterResetAndASnapshotWithoutTimeBetweenGiveNull) {
  auto a = at_ms(10'000);
  set_psi(*a, 9'000'000, 1'000'000);
  auto b = at_ms(11'000);
  set_psi(*b, 100, 50);  // lower than before: the counters started again
  auto c = at_ms(11'000);  // no time passed since b
  set_psi(*c, 200'000, 100'000);
  auto d = at_ms(12'000);
  set_psi(*d, 400'000, 100'000);
  const std::string json = render_history_json({a, b, c, d});
  EXPECT_NE(json.find(R"("psi_some_ratio":[null,null,null,0.2])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("psi_full_ratio":[null,null,null,0])"), std::string::npos) << json;
}

TEST(HistoryJson, RatiosAreRoundedAndAStallShareIsAtMostOne) {
  auto a = at_ms(0);
  set_psi(*a, 0, 0);
  auto b = at_ms(3'000);
  set_psi(*b, 1'000'000, 3'100'000);  // 1/3 of the time; 3.1 s "in" 3 s (read later than taken)
  const std::string json = render_history_json({a, b});
  EXPECT_NE(json.find(R"("psi_some_ratio":[null,0.3333])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("psi_full_ratio":[null,1])"), std::string::npos) << json;
}

TEST(HistoryJson, WindowsHasCommitAndPagesInputButNoPsiOrVmstat) {
  auto a = at_ms(5'000);
  a->system_memory = memory(2ull << 30, 3ull << 30, 5ull << 30);
  a->windows_paging.emplace().pages_input_total = 100;
  auto b = at_ms(8'000);
  b->system_memory = memory(2ull << 30, 3ull << 30, 5ull << 30);
  b->windows_paging.emplace().pages_input_total = 400;
  const std::string json = render_history_json({a, b});
  EXPECT_NE(json.find(R"("stall_level":[null,null],"overcommit_level":[null,null],)"
                      R"("psi_some_ratio":[null,null],"psi_full_ratio":[null,null],)"
                      R"("available_bytes":[2147483648,2147483648],"commit_charge_bytes":[3221225472,3221225472],)"
                      R"("commit_limit_bytes":[5368709120,5368709120],)"
                      R"("direct_scan_pages_per_second":[null,null],"refault_file_pages_per_second":[null,null],)"
                      R"("pages_input_per_second":[null,100]})"),
            std::string::npos)
      << json;
}

TEST(HistoryJson, KernelsBefore59CountFileRefaultsAsWorkingsetRefault) {
  const auto old_schema = vmstat_schema({"pgscan_direct", "workingset_refault"});
  auto a = at_ms(0);
  a->vmstat = FieldTable{old_schema, {0, 100}};
  auto b = at_ms(1'000);
  b->vmstat = FieldTable{old_schema, {0, 130}};
  const std::string json = render_history_json({a, b});
  EXPECT_NE(json.find(R"("refault_file_pages_per_second":[null,30])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("direct_scan_pages_per_second":[null,0])"), std::string::npos) << json;
}

TEST(HistoryJson, AnEmptyRingAndNullEntries) {
  EXPECT_EQ(render_history_json({}),
            R"({"schema":"memdiag.history/v1","taken_at_ms":[],"stall_level":[],"overcommit_level":[],)"
            R"("psi_some_ratio":[],"psi_full_ratio":[],"available_bytes":[],"commit_charge_bytes":[],)"
            R"("commit_limit_bytes":[],"direct_scan_pages_per_second":[],"refault_file_pages_per_second":[],)"
            R"("pages_input_per_second":[]})"
            "\n");
  const std::string json = render_history_json({nullptr, at_ms(7), nullptr});
  EXPECT_NE(json.find(R"("taken_at_ms":[7],"stall_level":[null],)"), std::string::npos) << json;
}

// The default ring (sampler.ring 300) of a busy node, every figure present and none round:
// what the status page fetches every 5 s stays small.
TEST(HistoryJson, ARingOf300StaysCompact) {
  std::vector<SnapshotPtr> ring;
  const std::int64_t start_ms = 1'796'000'000'123;  // 2026
  for (int i = 0; i < 300; ++i) {
    auto s = at_ms(start_ms + i * 1000 + (i * 7) % 13);
    set_levels(*s, VerdictLevel::kHigh, VerdictLevel::kCritical);
    s->system_memory = memory(987'654'321'987 - i * 4'099'001, 1'234'567'890'123 + i * 1'234'567,
                              1'099'511'627'776);
    set_psi(*s, 123'456'789 + i * 654'321ull, 23'456'789 + i * 123'457ull);
    set_vmstat(*s, 9'876'543'210 + i * 123'457ull, 1'234'567'890 + i * 23'459ull);
    ring.push_back(s);
  }
  const std::string json = render_history_json(ring);
  EXPECT_LT(json.size(), 32u * 1024) << json.size() << " bytes";
  EXPECT_GT(json.size(), 300u * 50);
  std::printf("history of 300 snapshots: %zu bytes\n", json.size());
}

}  // namespace
}  // namespace memdiag::report
