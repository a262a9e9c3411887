// SPDX-License-Identifier: Apache-2.0
// The diagnosis report (exporters/report) and its series (exporters/prometheus/
// pressure_metrics): the JSON writer's escaping, the report of a memcg stall in JSON and in 80
// columns of text, the next steps it gives, and the per-cgroup series of the verdict.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "daemon/diagnose_command.hpp"
#include "daemon/http/diagnosis_query.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/json_writer.hpp"
#include "probes/analysis/diagnosis_model.hpp"
#include "tests/support/memcg_stall_scenario.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;

TEST(JsonWriter, NestsEscapesAndSpellsWhatJsonCannot) {
  std::string out;
  report::JsonWriter w(out);
  w.begin_object();
  w.field("s", std::string_view("a\"b\\c\n\x01\xff"));
  w.field("n", 0.25);
  w.field("nan", std::numeric_limits<double>::quiet_NaN());
  w.field("big", std::uint64_t{18446744073709551615ull});
  w.field("absent", std::optional<double>{});
  w.key("list");
  w.begin_array();
  w.integer(1);
  w.begin_object();
  w.end_object();
  w.boolean(false);
  w.end_array();
  w.end_object();
  EXPECT_EQ(out, R"({"s":"a\"b\\c\n\u0001?","n":0.25,"nan":null,"big":18446744073709551615,"list":[1,{},false]})");
}

// The scenario's snapshot at `second`, judged by the model over the ones before.
std::shared_ptr<Snapshot> judged(int second) {
  analysis::DiagnosisModel model;
  std::vector<SnapshotPtr> ring;
  std::shared_ptr<Snapshot> s;
  for (int t = 0; t <= second; ++t) {
    s = test::Scenario::at_second(t);
    model.assess(*s, ring);
    ring.push_back(s);
  }
  return s;
}

TEST(DiagnosisReport, JsonNamesTheScopeItsContributorAndVictims) {
  const auto s = judged(20);
  const std::string json = report::render_diagnosis_json(*s, {});
  EXPECT_EQ(json.rfind(R"({"schema":"memdiag.diagnosis/v1","origin":"daemon","sequence":21,)", 0), 0u) << json;
  const std::size_t scope = json.find(R"("cgroups":[{"cgroup":"/jobs","level":{"name":"high","value":3})");
  ASSERT_NE(scope, std::string::npos) << json;
  const std::size_t contributors = json.find(R"("contributors":[{"cgroup":"/jobs/grower","contribution_ratio":)", scope);
  const std::size_t victims = json.find(R"("victims":[{"cgroup":"/jobs/reader1")", scope);
  EXPECT_NE(contributors, std::string::npos) << json;
  EXPECT_NE(victims, std::string::npos) << json;
  EXPECT_LT(contributors, victims);
  EXPECT_NE(json.find(R"("relief_bytes":524288000,"relief_swap_bytes":0,"relief_covers_shortfall":true)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("scope":"/jobs","from":"medium","to":"high","evidence":"stall_time=0.45(>=0.3,high))"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("next_steps":["Stop or limit /jobs/grower)"), std::string::npos) << json;
  EXPECT_EQ(json.back(), '\n');
}

TEST(DiagnosisReport, SinceLeavesOlderTransitionsOut) {
  const auto s = judged(20);  // transitions at t=11 and t=12
  const std::string all = report::render_diagnosis_json(*s, {});
  const std::string recent = report::render_diagnosis_json(*s, {.since = 8500ms});
  EXPECT_NE(all.find(R"("from":"none","to":"medium")"), std::string::npos);
  EXPECT_EQ(recent.find(R"("from":"none","to":"medium")"), std::string::npos) << recent;
  EXPECT_NE(recent.find(R"("from":"medium","to":"high")"), std::string::npos) << recent;
}

TEST(DiagnosisReport, TextFitsEightyColumnsAndSaysWhatToDo) {
  const auto s = judged(20);
  report::ReportOptions local;
  local.origin = "local";
  const std::string text = report::render_diagnosis_text(*s, local);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 80u) << line;
  for (const char* expected :
       {"NODE STALL: NONE", "CGROUP STALL: HIGH /jobs", "/jobs/grower", "/jobs/reader1", "contributors", "victims",
        "available 349MiB, shortfall 0B", "TIMELINE (2 transitions)", "NEXT STEPS", "  - Stop or limit /jobs/grower",
        "Raise the memory limit of /jobs", "(local)"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST(DiagnosisReport, LongEvidenceIsFoldedAndCutToEightyColumnsLosingNothing) {
  Snapshot s;
  s.taken_at = test::at(100);
  const std::string list = "contributors=" + std::string(120, 'a') + ",/b:0.17:relief=112MiB";
  const std::string evidence = "stall_time=0.0507(>=0.05,medium) signals=cgroup,psi,ebpf window=2.0s " + list;
  auto timeline = std::make_shared<std::vector<VerdictTransition>>();
  timeline->push_back({test::at(99), "/a-cgroup-path-long-enough-to-push-the-first-word", VerdictLevel::kNone,
                       VerdictLevel::kMedium, evidence});
  s.derived.timeline = timeline;
  const std::string text = report::render_diagnosis_text(s, {});
  std::istringstream lines(text);
  std::string line, joined;
  bool in_timeline = false;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 80u) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "[" << line << "]";
    if (line.rfind("TIMELINE", 0) == 0) in_timeline = true;
    if (in_timeline && line.rfind("      ", 0) == 0) joined += line.substr(6) + "|";
  }
  // The evidence came after the head, on lines of its own, with the long list cut, not lost.
  std::string unfolded;
  for (char c : joined) {
    if (c != '|') unfolded += c;
  }
  EXPECT_NE(unfolded.find(std::string(120, 'a') + ",/b:0.17:relief=112MiB"), std::string::npos) << text;
}

// A held cgroup level with a long path: the header keeps to 80 columns (a fresh CI run showed a
// 95-column one for "/memdiag-e2e-canary-pressure-17960"), the held note on a line of its own.
TEST(DiagnosisReport, AHeldCgroupLevelWithALongPathFitsEightyColumns) {
  Snapshot s;
  s.taken_at = test::at(100);
  CgroupScope scope;
  scope.cgroup = "/kubepods.slice/kubepods-burstable.slice/a-rather-long-pod-cgroup-name";
  scope.stall.level = VerdictLevel::kCritical;
  scope.stall.instant_level = VerdictLevel::kMedium;
  s.derived.cgroup_scopes.push_back(scope);
  const std::string text = report::render_diagnosis_text(s, {});
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_NE(text.find("CGROUP STALL: CRITICAL "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  (held, easing; this sample alone: medium)\n"), std::string::npos) << text;
}

TEST(DiagnosisReport, CalmNodeHasNoStepsAndNoRoles) {
  const auto s = judged(5);
  const std::string text = report::render_diagnosis_text(*s, {});
  EXPECT_NE(text.find("NODE STALL: NONE"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 cgroups with a limit judged; none stalling)"), std::string::npos) << text;
  EXPECT_EQ(text.find("NEXT STEPS"), std::string::npos) << text;
  EXPECT_NE(report::render_diagnosis_json(*s, {}).find(R"("cgroups":[],"cgroup_scopes_judged":1)"), std::string::npos);
}

// A snapshot whose breaking verdict holds a process at its map-count wall and a kill at a
// limited parent's limit.
std::shared_ptr<Snapshot> breaking_snapshot() {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = test::at(100);
  BreakingVerdict v;
  v.level = VerdictLevel::kCritical;
  v.oom_window_seconds = 300;
  BreakingItem maps;
  maps.kind = breaking_kind::kMapAreas;
  maps.level = VerdictLevel::kCritical;
  maps.subject = "pid 4242 (zig-test)";
  maps.pid = 4242;
  maps.comm = "zig-test";
  maps.cgroup = "/jobs/zig";
  maps.value = 65530;
  maps.limit = 65530;
  maps.ratio = 1.0;
  maps.explanation = "pid 4242 (zig-test) holds 65,530 of 65,530 map areas (vm.max_map_count): any mmap fails.";
  BreakingItem kill;
  kill.kind = breaking_kind::kOomKill;
  kill.level = VerdictLevel::kHigh;
  kill.subject = "/jobs";
  kill.cgroup = "/jobs/g";
  kill.value = 1;
  kill.limit = 512.0 * test::kMiB;
  kill.source = oom_killer::kKernel;
  kill.counted_by = "ebpf";
  kill.explanation = "the kernel's OOM killer killed 1 task in /jobs/g at the 512MiB limit of /jobs (an ancestor).";
  v.items = {maps, kill};
  s->derived.breaking = v;
  return s;
}

TEST(DiagnosisReport, BreakingInJsonTextNextStepsAndSeries) {
  const auto s = breaking_snapshot();
  const std::string json = report::render_diagnosis_json(*s, {});
  // JSON spelled with ' for ", so the expectations read as the output does.
  const auto q = [](std::string text) {
    for (char& c : text) c = c == '\'' ? '"' : c;
    return text;
  };
  for (const std::string& expected : {
           q("'breaking':{'level':{'name':'critical','value':4},'oom_window_seconds':300,'items':["
             "{'kind':'map_areas','level':'critical','subject':'pid 4242 (zig-test)','pid':4242,'comm':'zig-test',"
             "'cgroup':'/jobs/zig','value':65530,'limit':65530,'ratio':1,'source':'','counted_by':'',"
             "'explanation':'pid 4242 (zig-test) holds 65,530 of 65,530 map areas"),
           q("{'kind':'oom_kill','level':'high','subject':'/jobs','pid':null,'comm':'','cgroup':'/jobs/g',"
             "'value':1,'limit':536870912,'source':'kernel','counted_by':'ebpf',"),
           q("'dropped_items':0}"),
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }

  const std::string text = report::render_diagnosis_text(*s, {});
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 80u) << line;
  for (const char* expected :
       {"ABOUT TO BREAK: CRITICAL\n  - critical, map_areas: pid 4242 (zig-test) holds 65,530 of 65,530 map",
        "  - high, oom_kill: the kernel's OOM killer killed 1 task in /jobs/g at the",
        "NEXT STEPS\n  - pid 4242 (zig-test) is at 65530 of 65530 map areas: raise"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  std::string flat;  // the text unfolded: one space for every run of blanks and line breaks
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (!blank || (!flat.empty() && flat.back() != ' ')) flat += blank ? ' ' : c;
  }
  for (const char* expected :
       {"raise vm.max_map_count (sysctl -w vm.max_map_count=262120;",
        "The kernel OOM-killed 1 task(s) in /jobs/g at the 512MiB limit of /jobs: raise that limit or shrink what "
        "runs in it."}) {
    EXPECT_NE(flat.find(expected), std::string::npos) << expected << "\n" << text;
  }

  SnapshotStore store(1);
  store.publish(s);
  prom::SnapshotCollector collector(store, prom::BuildInfo{"1", "r", "c"});
  std::string body;
  collector.render_text(body);
  for (const char* expected : {
           "memdiag_breaking_level 4\n",
           "memdiag_breaking_state{level=\"critical\"} 1\n",
           "memdiag_breaking_items{kind=\"map_areas\"} 1\n",
           "memdiag_breaking_items{kind=\"cgroup_limit\"} 0\n",
           "memdiag_breaking_kind_level{kind=\"oom_kill\"} 3\n",
           "memdiag_breaking_item_level{kind=\"map_areas\",subject=\"pid 4242 (zig-test)\"} 4\n",
           "memdiag_breaking_item_level{kind=\"oom_kill\",subject=\"/jobs\"} 3\n",
       }) {
    EXPECT_NE(body.find(expected), std::string::npos) << expected;
  }
}

TEST(PressureMetrics, TheScopesLevelAndItsMembersRoles) {
  SnapshotStore store(1);
  store.publish(judged(20));
  prom::SnapshotCollector collector(store, prom::BuildInfo{"1", "r", "c"});
  std::string body;
  collector.render_text(body);
  for (const char* expected : {
           "memdiag_cgroup_stall_level{cgroup=\"/jobs\"} 3\n",
           "memdiag_cgroup_available_bytes{cgroup=\"/jobs\"} 365953024\n",
           "memdiag_cgroup_shortfall_bytes{cgroup=\"/jobs\"} 0\n",
           "memdiag_cgroup_pressure_role{cgroup=\"/jobs/grower\",role=\"contributor\",scope=\"/jobs\"} 1\n",
           "memdiag_cgroup_pressure_role{cgroup=\"/jobs/reader1\",role=\"victim\",scope=\"/jobs\"} 1\n",
           "memdiag_cgroup_relief_bytes{cgroup=\"/jobs/grower\"} 524288000\n",
           "memdiag_shortfall_bytes 0\n",
       }) {
    EXPECT_NE(body.find(expected), std::string::npos) << expected;
  }
  EXPECT_EQ(body.find("memdiag_cgroup_pressure_role{cgroup=\"/jobs/grower\",role=\"victim\""), std::string::npos);
  EXPECT_EQ(body.find("memdiag_forecast_exhaustion_seconds"), std::string::npos) << "no trend yet";
}

TEST(PressureMetrics, ACgroupsRoleComesFromTheInnermostStallingScope) {
  // /a/b/c is a member of the node (a leaf), of /a/b and (were it listed there) of /a; the
  // scopes come in the section's order, here the deepest first.
  auto snap = std::make_shared<Snapshot>();
  snap->sequence = 1;
  CgroupSection section;
  for (const char* path : {"/a/b", "/a", "/a/b/c"}) {
    CgroupSample c;
    c.path = path;
    section.cgroups.push_back(c);
  }
  snap->cgroups = section;
  auto scope = [](const char* path, const char* member, PressureRole role) {
    CgroupScope s;
    s.cgroup = path;
    s.stall.level = VerdictLevel::kMedium;
    ScopeMember m;
    m.cgroup = member;
    m.role = role;
    s.analysis.members.push_back(m);
    return s;
  };
  snap->derived.cgroup_scopes = {scope("/a/b", "/a/b/c", PressureRole::kVictim),
                                 scope("/a", "/a/b/c", PressureRole::kContributor)};
  snap->derived.node_scope = ScopeAnalysis{};
  ScopeMember at_node;
  at_node.cgroup = "/a/b/c";
  at_node.role = PressureRole::kContributor;
  snap->derived.node_scope->members.push_back(at_node);
  SnapshotStore store(1);
  store.publish(snap);
  prom::SnapshotCollector collector(store, prom::BuildInfo{"1", "r", "c"});
  std::string body;
  collector.render_text(body);
  EXPECT_NE(body.find("memdiag_cgroup_pressure_role{cgroup=\"/a/b/c\",role=\"victim\",scope=\"/a/b\"} 1\n"),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("role=\"contributor\""), std::string::npos) << body;
}

TEST(DiagnosisQuery, FormatAndSinceOrARefusal) {
  auto q = http::parse_diagnosis_query("format=text&since=5m");
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->text);
  EXPECT_EQ(q->since, std::chrono::milliseconds(300000));
  ASSERT_TRUE(http::parse_diagnosis_query(""));
  EXPECT_FALSE(http::parse_diagnosis_query("")->text);
  EXPECT_FALSE(http::parse_diagnosis_query("format=xml"));
  EXPECT_FALSE(http::parse_diagnosis_query("since=soon"));
  EXPECT_FALSE(http::parse_diagnosis_query("sinse=5m"));
}

TEST(DiagnoseCommand, ArgumentsAndTheDaemonsAddress) {
  auto o = parse_diagnose_args({"--format", "json", "--since=10m", "--duration", "3s", "--timeout", "500ms"});
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->since, std::chrono::milliseconds(600000));
  EXPECT_EQ(o->duration, std::chrono::milliseconds(3000));
  EXPECT_EQ(o->timeout, std::chrono::milliseconds(500));
  EXPECT_FALSE(parse_diagnose_args({"--format", "yaml"}));
  EXPECT_FALSE(parse_diagnose_args({"--duration", "0s"}));
  EXPECT_FALSE(parse_diagnose_args({"--since"}));
  const auto unknown = parse_diagnose_args({"--formt", "json"});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("did you mean '--format'"), std::string::npos);
  EXPECT_EQ(diagnosis_url_for("0.0.0.0:9842"), "http://127.0.0.1:9842/api/v1/diagnosis");
  EXPECT_EQ(diagnosis_url_for("[::]:9842"), "http://[::1]:9842/api/v1/diagnosis");
  EXPECT_EQ(diagnosis_url_for("10.1.2.3:80"), "http://10.1.2.3:80/api/v1/diagnosis");
}

TEST(DiagnoseCommand, TheSocketPathIsCheckedAsTheDaemonChecksIt) {
  EXPECT_EQ(parse_diagnose_args({"--socket", "/run/memdiag/memdiagd.sock"})->socket, "/run/memdiag/memdiagd.sock");
  EXPECT_FALSE(parse_diagnose_args({"--socket", ""}));
  EXPECT_FALSE(parse_diagnose_args({"--socket", "run/memdiagd.sock"}));
  const auto too_long = parse_diagnose_args({"--socket", "/" + std::string(120, 'a')});
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().message.find("longer than a Unix socket address holds"), std::string::npos);
}

TEST(DiagnoseCommand, AClientCertificateComesWithItsKey) {
  auto both = parse_diagnose_args({"--cert-file", "/etc/c.crt", "--key-file=/etc/c.key"});
  ASSERT_TRUE(both);
  EXPECT_EQ(both->cert_file, "/etc/c.crt");
  EXPECT_EQ(both->key_file, "/etc/c.key");
  for (const auto& half : {std::vector<std::string>{"--cert-file", "/etc/c.crt"},
                           std::vector<std::string>{"--key-file", "/etc/c.key"}}) {
    const auto refused = parse_diagnose_args(half);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("--cert-file and --key-file go together"), std::string::npos);
  }
}

}  // namespace
}  // namespace memdiag
