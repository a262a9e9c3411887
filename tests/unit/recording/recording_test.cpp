// SPDX-License-Identifier: Apache-2.0
// Recordings (probes/recording): every recorded field comes back as it was written; a snapshot
// that barely changed takes few bytes; truncated, garbage, oversized and out-of-order input is
// an error naming what and where, never a crash or a huge allocation.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "probes/recording/recording_reader.hpp"
#include "probes/recording/recording_writer.hpp"
#include "probes/recording/snapshot_fields.hpp"
#include "probes/recording/varint.hpp"

namespace memdiag::recording {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::system_clock;

// A snapshot with every field set away from its default (k varies the numbers), so a field
// the recording forgot would come back different.
std::shared_ptr<Snapshot> full_snapshot(std::uint64_t k) {
  static const auto meminfo_schema = std::make_shared<FieldSchema>(
      FieldSchema{{"MemTotal", "MemAvailable", "HugePages_Total"}, {FieldKind::kBytes, FieldKind::kBytes, FieldKind::kCount}});
  static const auto vmstat_schema = std::make_shared<FieldSchema>(
      FieldSchema{{"pgscan_direct", "nr_free_pages"}, {FieldKind::kCounter, FieldKind::kGauge}});
  auto s = std::make_shared<Snapshot>();
  s->sequence = 7 + k;
  s->taken_at = Clock::time_point(std::chrono::seconds(1'800'000'000 + k));
  s->system_memory = SystemMemory{16ull << 30, (9ull << 30) - k * 4096, 2ull << 30, 1ull << 30, 5ull << 30, 10ull << 30,
                                  3ull << 30};
  s->overcommit_policy = OvercommitPolicy{OvercommitMode::kAlways, 50.0, 1024};
  s->process_memory = ProcessMemorySection{{ProcessMemory{-3, "worker", 100 + k, 20, 900, 65530, 700, 500, 4096 + k, 77},
                                            ProcessMemory{42, "memdiagd", 7, 0, 8, std::nullopt, 1, 0, std::nullopt, std::nullopt}},
                                           311};
  s->meminfo = FieldTable{meminfo_schema, {16ull << 30, (9ull << 30) - k * 4096, 4}};
  s->vmstat = FieldTable{vmstat_schema, {1000 + 17 * k, 123456}};
  PressureSection psi;
  psi.resources[0] = PsiResource{PsiLine{0.125, 0.25, 0.5, 1000 + k}, PsiLine{0.01, 0.02, 0.03, 99}};
  psi.resources[2] = PsiResource{PsiLine{0.5, 0.5, 0.5, 7}, std::nullopt};
  s->pressure = psi;
  s->vm_sysctl = VmSysctlSection{{{"overcommit_memory", 1}, {"dirty_bytes", 1.8e19}}};

  CgroupSection cg;
  cg.mode = "hybrid";
  cg.page_bytes = 16384;
  CgroupSample c;
  c.path = "/kubepods.slice/pod-a";
  c.identity = WorkloadIdentity{"1234-5678", "burstable", "abcdef", "kubelet.service"};
  c.leaf = false;
  c.usage_bytes = 500 + k;
  c.limit_bytes = 1000;
  c.limited = true;
  c.high_bytes = 900;
  c.low_bytes = 100;
  c.swap_usage_bytes = 5;
  c.memsw_usage_bytes = 505;
  c.memsw_limit_bytes = 2000;
  c.failcnt = 3 + k;
  c.under_oom = true;
  c.events = {1, 2, 3, 4, 5, std::nullopt};
  c.stat = {{"anon", 300 + k, false}, {"workingset_refault_file", 77, true}};
  c.pressure = PsiResource{PsiLine{0.5, 0.25, 0.125, 12345 + k}, PsiLine{0.1, 0.1, 0.1, 99}};
  c.notifications = CgroupNotifications{false, {1, 2, 3}, 4};
  c.oomd_user_kills = 2;
  c.oomd_trusted_kills = 1 + k;
  CgroupSample leaf;
  leaf.path = "/kubepods.slice/pod-a/c1";
  cg.cgroups = {c, leaf};
  cg.discovered = 9;
  cg.dropped = 7;
  cg.leaf_limits_sum_bytes = 1234;
  cg.limited_leaves = 2;
  cg.unlimited_leaves = 3;
  cg.watched = 4;
  cg.oom_notifications = 5;
  cg.tree_walks = 6 + k;
  cg.open_files = 8;
  cg.malformed_files = 1;
  cg.first_malformed = "memory.stat: garbage";
  s->cgroups = cg;

  ReclaimStallSection rs;
  rs.attach_mode = "tp_btf";
  rs.kind_modes.fill("tracepoint");
  rs.kind_modes[1] = "";
  rs.oom_victims_mode = "tp_btf";
  rs.node[0].record(1500 + k);
  rs.node[3].record(1'000'000);
  rs.node_oom_victims = 2;
  CgroupStall stall{"/kubepods.slice/pod-a", StallKind::kCompaction, {}};
  stall.stall.record(4000);
  rs.cgroups = {stall};
  rs.oom_victims = {CgroupOomVictims{"/x", 3}};
  rs.recent_oom_victims = {OomVictim{7 + k, 4242, "python3", "/x"}, OomVictim{8 + k, -1, "", ""}};
  rs.dropped_cgroups = 1;
  rs.dropped_events = 2;
  rs.unresolved_ids = 3;
  s->reclaim_stall = rs;

  ProcessSection ps;
  ps.mode = "bpf_iter";
  ps.scanned_at = s->taken_at - std::chrono::milliseconds(250);
  ps.scan_seconds = 0.01;
  ps.scan_cpu_seconds = 0.005;
  ps.scan_in_flight_seconds = 0.5;
  ps.max_map_count = 65530;
  ps.threshold_ratio = 0.8;
  ps.processes = 300;
  ps.map_areas_ratio_max = 0.9;
  ps.committed_private_bytes = 1 << 30;
  ps.unbacked_promise_bytes = 1 << 29;
  ps.above_threshold = 2;
  ps.above_threshold_dropped = 1;
  ps.ratio_cumulative = {1, 2, 3, 4, 5, 6, 7, 8, 300};
  ps.selected = {SelectedProcess{-1, "a", "/x", 60000, 0.91, 1, 2, 3, 4, 5, 6, 7, kTopMapAreas | kSelf}};
  ps.cgroups = {CgroupProcessTotals{"/x", 1, 2, 3, 4, 5, 6, 7, 8}};
  ps.dropped_cgroups = 1;
  ps.unknown_cgroup_processes = 2;
  ps.vanished_total = 3;
  ps.unreadable = 4;
  ps.malformed = 5;
  s->processes = ps;

  CanarySection canary;
  canary.node.page_fault.record(800 + k);
  canary.node.cycle.record(90000);
  canary.node.cycles = 10;
  canary.node.failures = 1;
  canary.node.skipped = 2;
  canary.node.backing_off = true;
  canary.node.last_psi_full_avg10 = 12.5;
  canary.node_cgroup = "/system.slice/memdiagd.service";
  canary.node_running = true;
  canary.allocator = CanaryAllocatorStats{1, 2, 3, 4, 5, 6, 7, 64 << 20};
  CgroupCanaryReading cr;
  cr.cgroup = "/jobs";
  cr.running = true;
  cr.error = "exited";
  cr.reading.cycles = 4;
  canary.cgroups = {cr};
  s->canary = canary;
  s->windows_memory = WindowsMemorySection{14ull << 30, (3ull << 30) + k, 300ull << 20, 200ull << 20, 62, 150, 2000, 60000,
                                           k % 2 == 0, 3 + k};
  s->windows_paging = WindowsPagingSection{100000 + k, 2000 + k, std::nullopt, 77};

  s->sources = {SourceStatus{"meminfo", true, 0.001, ""}, SourceStatus{"cgroup", false, 0.02, "no hierarchy"}};
  return s;
}

RecordingHeader header() {
  return RecordingHeader{"memdiagd test", "node-1", "Linux 6.18", milliseconds(1000),
                         Clock::time_point(std::chrono::seconds(1'800'000'000))};
}

std::string record(const std::vector<std::shared_ptr<Snapshot>>& snapshots) {
  std::vector<const Snapshot*> raw;
  for (const auto& s : snapshots) raw.push_back(s.get());
  return encode_recording(header(), raw);
}

TEST(Recording, EveryFieldComesBackAsWritten) {
  const std::vector<std::shared_ptr<Snapshot>> written = {full_snapshot(0), full_snapshot(1), full_snapshot(5)};
  auto decoded = decode_recording(record(written));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->header, header());
  ASSERT_EQ(decoded->snapshots.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    EXPECT_TRUE(same_recorded_fields(*decoded->snapshots[i], *written[i])) << "snapshot " << i;
  }
  // Spot checks of what equality alone might hide: a negative pid, a value above INT64_MAX, a
  // nested optional, a string_view that points into the recording's own strings.
  const Snapshot& back = *decoded->snapshots[1];
  EXPECT_EQ(back.process_memory->processes[0].pid, -3);
  EXPECT_EQ(back.vm_sysctl->values[1].value, 1.8e19);
  EXPECT_EQ(back.cgroups->cgroups[0].pressure->full->total_us, 99u);
  EXPECT_EQ(back.cgroups->mode, "hybrid");
  EXPECT_EQ(back.cgroups->cgroups[0].stat[1].key, "workingset_refault_file");
  EXPECT_EQ(back.vmstat->get("pgscan_direct"), 1017u);
  // The field lists are written once and shared by the snapshots that read them back.
  EXPECT_EQ(decoded->snapshots[0]->vmstat->schema, decoded->snapshots[2]->vmstat->schema);
}

TEST(Recording, DefaultSnapshotsAndEmptyRecordingsRoundTrip) {
  auto empty = decode_recording(record({}));
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_TRUE(empty->snapshots.empty());
  auto bare = std::make_shared<Snapshot>();
  auto decoded = decode_recording(record({bare, bare}));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  ASSERT_EQ(decoded->snapshots.size(), 2u);
  EXPECT_TRUE(same_recorded_fields(*decoded->snapshots[1], *bare));
}

TEST(Recording, AFieldListThatChangesIsWrittenAgain) {
  auto a = full_snapshot(0);
  auto b = full_snapshot(1);
  b->vmstat = FieldTable{std::make_shared<FieldSchema>(FieldSchema{{"pgscan_kswapd"}, {FieldKind::kCounter}}), {5}};
  auto c = full_snapshot(2);
  auto decoded = decode_recording(record({a, b, c}));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->snapshots[1]->vmstat->get("pgscan_kswapd"), 5u);
  EXPECT_EQ(decoded->snapshots[2]->vmstat->get("pgscan_direct"), 1034u);
  EXPECT_TRUE(same_recorded_fields(*decoded->snapshots[2], *c));
}

TEST(Recording, ASnapshotThatBarelyChangedTakesAFewBytesPerField) {
  RecordingWriter writer;
  writer.begin(header());
  const std::size_t first = writer.append(*full_snapshot(0)).size();
  const std::size_t next = writer.append(*full_snapshot(1)).size();
  // A snapshot identical to the one before: one byte per number, nothing else.
  const std::size_t same = writer.append(*full_snapshot(1)).size();
  // The first pays for its strings and whole numbers; the next differs from the one before in
  // a dozen numbers (the times by a second, in nanoseconds: 5 bytes each).
  EXPECT_LT(same * 3, first * 2) << "first " << first << " bytes, same " << same;
  EXPECT_LE(next, same + 40) << "next " << next << " bytes, same " << same;
}

TEST(Recording, TruncatedAnywhereIsAnErrorAfterTheCompleteSnapshots) {
  const std::vector<std::shared_ptr<Snapshot>> written = {full_snapshot(0), full_snapshot(1), full_snapshot(2)};
  const std::string bytes = record(written);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto reader = RecordingReader::open(bytes.substr(0, cut));
    if (!reader) {
      EXPECT_NE(reader.error().message.find("truncated"), std::string::npos) << cut << ": " << reader.error().message;
      continue;
    }
    std::size_t good = 0;
    for (;;) {
      auto next = reader->next();
      if (!next) {
        EXPECT_TRUE(reader->truncated()) << cut << ": " << next.error().message;
        EXPECT_NE(next.error().message.find("truncated"), std::string::npos) << next.error().message;
        break;
      }
      ASSERT_TRUE(next->has_value()) << "a cut file at " << cut << " read as complete";
      EXPECT_TRUE(same_recorded_fields(***next, *written[good])) << cut;
      ++good;
    }
    EXPECT_EQ(reader->snapshots(), good);
  }
}

TEST(Recording, GarbageIsAnErrorNotACrash) {
  EXPECT_FALSE(decode_recording("").ok());
  auto not_one = decode_recording("hello world, this is not a recording at all");
  ASSERT_FALSE(not_one.ok());
  EXPECT_NE(not_one.error().message.find("not a memdiag recording"), std::string::npos);

  const std::string good = record({full_snapshot(0), full_snapshot(1)});
  std::mt19937_64 random(14);
  std::size_t refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[kMagic.size() + random() % (bytes.size() - kMagic.size())] = static_cast<char>(random());
    }
    auto decoded = decode_recording(bytes);
    if (!decoded) {
      ++refused;
      EXPECT_FALSE(decoded.error().message.empty());
    }
  }
  EXPECT_GT(refused, 1000u);  // most flips break a frame; some only change a number
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  EXPECT_FALSE(decode_recording(std::string(kMagic) + "\x01" + noise).ok());
}

TEST(Recording, HugeLengthsAndCountsAreRefusedBeforeAllocating) {
  std::string bytes(kMagic);
  append_varint(bytes, kFormatVersion);
  bytes.push_back('H');
  append_varint(bytes, 1ull << 40);
  auto frame = decode_recording(bytes);
  ASSERT_FALSE(frame.ok());
  EXPECT_NE(frame.error().message.find("a frame of 1099511627776 bytes"), std::string::npos) << frame.error().message;

  // A header whose first string claims 2^40 bytes.
  std::string header_bytes(kMagic);
  append_varint(header_bytes, kFormatVersion);
  std::string payload;
  append_varint(payload, zigzag(1, 0));  // the first string
  append_varint(payload, 1ull << 40);
  header_bytes.push_back('H');
  append_varint(header_bytes, payload.size());
  header_bytes += payload;
  auto text = decode_recording(header_bytes);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("string cut off or longer"), std::string::npos) << text.error().message;

  // A snapshot whose list of processes claims 2^30 entries in a frame of a few bytes.
  RecordingWriter writer;
  std::string rec = writer.begin(header());
  std::string snap;
  for (int i = 0; i < 3; ++i) append_varint(snap, 0);  // sequence, taken_at, no system memory
  append_varint(snap, zigzag(0, 0));                     // no overcommit policy
  append_varint(snap, zigzag(1, 0));                     // a process memory section
  append_varint(snap, zigzag(1ull << 30, 0));            // of 2^30 processes
  rec.push_back('S');
  append_varint(rec, snap.size());
  rec += snap;
  auto list = decode_recording(rec);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("a list of 1073741824 entries"), std::string::npos) << list.error().message;

  // And one of 200,000 in a frame that has the bytes: more than any source makes.
  std::string many = writer.begin(header());
  std::string big;
  for (int i = 0; i < 3; ++i) append_varint(big, 0);
  append_varint(big, zigzag(0, 0));
  append_varint(big, zigzag(1, 0));
  append_varint(big, zigzag(200000, 0));
  big.append(300000, '\0');
  many.push_back('S');
  append_varint(many, big.size());
  many += big;
  auto capped = decode_recording(many);
  ASSERT_FALSE(capped.ok());
  EXPECT_NE(capped.error().message.find("a list of 200000 entries (at most 131072)"), std::string::npos)
      << capped.error().message;
}

TEST(Recording, OtherVersionsTimeGoingBackAndTrailingBytesAreRefused) {
  std::string other(kMagic);
  append_varint(other, kFormatVersion + 1);
  auto version = decode_recording(other);
  ASSERT_FALSE(version.ok());
  const std::string expected = "format version " + std::to_string(kFormatVersion + 1) +
                               "; this memdiagd reads versions 1 to " + std::to_string(kFormatVersion);
  EXPECT_NE(version.error().message.find(expected), std::string::npos)
      << version.error().message;
  std::string zero(kMagic);
  append_varint(zero, 0);
  EXPECT_FALSE(decode_recording(zero).ok());

  auto later = full_snapshot(5);
  auto earlier = full_snapshot(1);
  auto backwards = decode_recording(record({later, earlier}));
  ASSERT_FALSE(backwards.ok());
  EXPECT_NE(backwards.error().message.find("taken before"), std::string::npos) << backwards.error().message;

  auto trailing = decode_recording(record({full_snapshot(0)}) + "x");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.error().message.find("after the end mark"), std::string::npos);
}

TEST(Recording, VarintsRoundTripAtTheEdges) {
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 1ull << 35, ~0ull}) {
    std::string out;
    append_varint(out, v);
    std::size_t pos = 0;
    EXPECT_EQ(read_varint(out, pos), v);
    EXPECT_EQ(pos, out.size());
    for (std::uint64_t base : {0ull, 5ull, ~0ull}) EXPECT_EQ(unzigzag(zigzag(v, base), base), v);
  }
  std::size_t pos = 0;
  EXPECT_FALSE(read_varint(std::string(11, '\xff'), pos).has_value());
  pos = 0;
  EXPECT_FALSE(read_varint(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10), pos).has_value());
  EXPECT_EQ(zigzag(4, 5), 1u);  // -1
  EXPECT_EQ(zigzag(6, 5), 2u);  // +1
}

}  // namespace
}  // namespace memdiag::recording
