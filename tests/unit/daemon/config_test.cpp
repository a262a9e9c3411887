// SPDX-License-Identifier: Apache-2.0
// Config validation: the defaults, the documented example, and bad configs each refused with
// the key and line that are wrong.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <unistd.h>
#include <stdlib.h>

#include "daemon/cli.hpp"
#include "daemon/config.hpp"
#include "daemon/config_values.hpp"
#include "probes/canary/canary_settings.hpp"
#include "probes/linux/cgroup/cgroup_options.hpp"
#include "probes/linux/node/vm_sysctl_registration.hpp"
#include "probes/linux/process/process_options.hpp"

namespace memdiag {
namespace {

TEST(Config, EmptyFileMeansDefaults) {
  auto config = parse_config("", "empty.yaml");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->listen_address, kDefaultListenAddress);
  EXPECT_EQ(config->interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(config->ring, 300u);
  EXPECT_TRUE(config->source_enabled("meminfo"));
  EXPECT_TRUE(config->source_enabled("pressure"));
}

TEST(Config, FullDocument) {
  auto config = parse_config(R"(
web:
  listen_address: "127.0.0.1:9100"
paths: { procfs: /host/proc, sysfs: /host/sys }
sampler: { interval: 500ms, ring: 60 }
log: { level: debug }
sources:
  meminfo: { enabled: true }
  vmstat: { enabled: false }
  pressure:
)",
                             "full.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->listen_address, "127.0.0.1:9100");
  EXPECT_EQ(config->paths.procfs, "/host/proc");
  EXPECT_EQ(config->paths.sysfs, "/host/sys");
  EXPECT_EQ(config->interval, std::chrono::milliseconds(500));
  EXPECT_EQ(config->ring, 60u);
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_FALSE(config->source_enabled("vmstat"));
  EXPECT_TRUE(config->source_enabled("pressure"));
  EXPECT_EQ(config->source_options<VmSysctlOptions>("vm_sysctl").refresh_interval, std::chrono::seconds(10));
}

TEST(Config, SysctlRefreshInterval) {
  auto config = parse_config("sources:\n  vm_sysctl: {refresh_interval: 0s}\n", "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->source_options<VmSysctlOptions>("vm_sysctl").refresh_interval, std::chrono::milliseconds(0));
  // only vm_sysctl has it
  auto refused = parse_config("sources:\n  meminfo: {refresh_interval: 5s}\n", "x.yaml");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().key, "sources.meminfo.refresh_interval");
}

TEST(Config, ShippedExampleIsValid) {
  auto config = load_config_file(MEMDIAG_SOURCE_DIR "/deploy/memdiagd.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->interval, std::chrono::milliseconds(1000));
  // The one value the example sets apart from the built-in default: the unit makes its directory.
  EXPECT_EQ(config->unix_socket, "/run/memdiag/memdiagd.sock");
}

TEST(Config, UnixSocketIsOffByDefaultAndTakesAnAbsolutePath) {
  EXPECT_EQ(default_config().unix_socket, "");
  auto config = parse_config("web:\n  unix_socket: /run/memdiag/memdiagd.sock\n", "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->unix_socket, "/run/memdiag/memdiagd.sock");
  auto off = parse_config("web:\n  unix_socket: \"\"\n", "x.yaml");
  ASSERT_TRUE(off) << off.error().to_string();
  EXPECT_EQ(off->unix_socket, "");
  // 107 bytes is the most sun_path holds with its NUL.
  const std::string longest = "/" + std::string(kMaxUnixSocketPath - 1, 's');
  EXPECT_TRUE(parse_config("web:\n  unix_socket: " + longest + "\n", "x.yaml"));
}

TEST(Config, UnixSocketTooLongIsRefusedWithFileLineKeyAndLength) {
  const std::string too_long = "/" + std::string(kMaxUnixSocketPath, 's');  // 108 bytes
  auto config = parse_config("# a comment\nweb:\n  unix_socket: " + too_long + "\n", "memdiagd.yaml");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().to_string(),
            "memdiagd.yaml:3: web.unix_socket: longer than a Unix socket address holds (107 bytes), got 108");
}

TEST(Cli, UnixSocketFlagOverridesTheFileAndIsChecked) {
  auto options = parse_cli({"--config", MEMDIAG_SOURCE_DIR "/deploy/memdiagd.yaml", "--web.unix-socket", "/tmp/m.sock"});
  ASSERT_TRUE(options) << options.error().message;
  auto config = resolve_config(*options);
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->unix_socket, "/tmp/m.sock");
  auto off = resolve_config(parse_cli({"--config", MEMDIAG_SOURCE_DIR "/deploy/memdiagd.yaml", "--web.unix-socket="}).value());
  ASSERT_TRUE(off) << off.error().to_string();
  EXPECT_EQ(off->unix_socket, "");  // "" turns the example's socket off
  auto refused = resolve_config(parse_cli({"--web.unix-socket", "memdiagd.sock"}).value());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().to_string(),
            "command line: --web.unix-socket: expected an absolute path, got 'memdiagd.sock'");
}

TEST(Config, TheShippedExampleStatesTheVerdictDefaults) {
  auto config = load_config_file(MEMDIAG_SOURCE_DIR "/deploy/memdiagd.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  // The example documents the defaults: it must say what the code does.
  EXPECT_EQ(config->diagnosis.stall, analysis::StallThresholds{});
  analysis::OvercommitThresholds expected;
  expected.cgroup_limit_overcommit = {1, 2, 1e300, 1e300};
  EXPECT_EQ(config->diagnosis.overcommit, expected);
  EXPECT_EQ(config->diagnosis.roles, analysis::RoleSettings{});
  EXPECT_EQ(config->diagnosis.forecast, analysis::ForecastSettings{});
  EXPECT_EQ(config->diagnosis.breaking, analysis::BreakingSettings{});
}

TEST(Config, DiagnosisBreaking) {
  auto config = parse_config(
      "diagnosis:\n"
      "  breaking: {map_areas_ratio: [0.5, 0.6], oom_window: 10m, max_items: 7, near_limit_ratio: 0.02}\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto& b = config->diagnosis.breaking;
  EXPECT_EQ(b.map_areas_ratio, (LevelThresholds{0.5, 0.6, 1e300, 1e300}));
  EXPECT_EQ(b.oom_window, std::chrono::milliseconds(600000));
  EXPECT_EQ(b.max_items, 7u);
  EXPECT_DOUBLE_EQ(b.oom.near_limit_ratio, 0.02);
  EXPECT_EQ(b.cgroup_limit_ratio, analysis::BreakingSettings{}.cgroup_limit_ratio);
}

TEST(Config, DiagnosisRolesAndForecast) {
  auto config = parse_config(
      "diagnosis:\n"
      "  roles: {similar_ratio: 0.25, headroom_ratio: 0.05, growth_half_life: 30s, max_members: 3}\n"
      "  forecast: {window: 2m, min_fit: 0.9, horizon: 10m}\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto& roles = config->diagnosis.roles;
  EXPECT_DOUBLE_EQ(roles.similar_ratio, 0.25);
  EXPECT_DOUBLE_EQ(roles.headroom_ratio, 0.05);
  EXPECT_EQ(roles.growth_half_life, std::chrono::milliseconds(30000));
  EXPECT_EQ(roles.max_members, 3u);
  const auto& forecast = config->diagnosis.forecast;
  EXPECT_EQ(forecast.window, std::chrono::milliseconds(120000));
  EXPECT_DOUBLE_EQ(forecast.min_fit, 0.9);
  EXPECT_EQ(forecast.horizon, std::chrono::milliseconds(600000));
}

TEST(Config, DiagnosisThresholds) {
  auto config = parse_config(
      "diagnosis:\n"
      "  stall: {window: 3s, hold: 0s, psi_some: [0.2, 0.4], swap_exhausted_free_ratio: 0.1}\n"
      "  overcommit: {unbacked_to_supply: [0.25], commit_headroom_critical_bytes: 1048576}\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto& stall = config->diagnosis.stall;
  EXPECT_EQ(stall.window, std::chrono::milliseconds(3000));
  EXPECT_EQ(stall.hold, std::chrono::milliseconds(0));
  EXPECT_EQ(stall.psi_some, (LevelThresholds{0.2, 0.4, 1e300, 1e300}));  // medium is as far as it goes
  EXPECT_EQ(stall.psi_full, analysis::StallThresholds{}.psi_full);       // not given: the default
  EXPECT_DOUBLE_EQ(stall.swap_exhausted_free_ratio, 0.1);
  const auto& overcommit = config->diagnosis.overcommit;
  EXPECT_EQ(overcommit.unbacked_to_supply, (LevelThresholds{0.25, 1e300, 1e300, 1e300}));
  EXPECT_EQ(overcommit.commit_headroom_critical_bytes, 1048576u);
}

struct BadConfig {
  const char* yaml;
  const char* key;
  int line;
  const char* reason_part;
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, RefusedWithKeyLineAndReason) {
  const BadConfig& bad = GetParam();
  auto config = parse_config(bad.yaml, "bad.yaml");
  ASSERT_FALSE(config) << bad.yaml;
  EXPECT_EQ(config.error().file, "bad.yaml");
  EXPECT_EQ(config.error().key, bad.key) << config.error().to_string();
  EXPECT_EQ(config.error().line, bad.line) << config.error().to_string();
  EXPECT_NE(config.error().reason.find(bad.reason_part), std::string::npos) << config.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigTest,
    ::testing::Values(
        BadConfig{"sampler:\n  intervl: 1s\n", "sampler.intervl", 2, "did you mean 'interval'"},
        BadConfig{"sampler:\n  interval: fast\n", "sampler.interval", 2, "expected a duration"},
        BadConfig{"sampler:\n  interval: 10ms\n", "sampler.interval", 2, "between 100ms and 1h"},
        BadConfig{"sampler:\n  interval: 2h\n", "sampler.interval", 2, "between 100ms and 1h"},
        BadConfig{"sampler:\n  ring: 0\n", "sampler.ring", 2, "between 1 and"},
        BadConfig{"sampler:\n  ring: lots\n", "sampler.ring", 2, "whole number"},
        BadConfig{"sampler:\n  ring: [1, 2]\n", "sampler.ring", 2, "single value"},
        BadConfig{"web:\n  listen_address: 9842\n", "web.listen_address", 2, "HOST:PORT"},
        BadConfig{"web:\n  listen_address: \"127.0.0.1:70000\"\n", "web.listen_address", 2, "1..65535"},
        BadConfig{"web:\n  listen_address: \"localhost:9842\"\n", "web.listen_address", 2, "numeric address"},
        BadConfig{"web:\n  unix_socket: run/memdiagd.sock\n", "web.unix_socket", 2, "absolute path"},
        BadConfig{"web:\n  unix_socket: /run/memdiag/\n", "web.unix_socket", 2, "names a directory"},
        BadConfig{"web:\n  unix_socket: [/run/a.sock]\n", "web.unix_socket", 2, "single value"},
        BadConfig{"web:\n  unix_sockt: /run/a.sock\n", "web.unix_sockt", 2, "did you mean 'unix_socket'"},
        BadConfig{"log:\n  level: verbose\n", "log.level", 2, "expected one of"},
        BadConfig{"paths:\n  procfs: relative/proc\n", "paths.procfs", 2, "absolute path"},
        BadConfig{"sources:\n  meminfo:\n    enabled: maybe\n", "sources.meminfo.enabled", 3, "true or false"},
        BadConfig{"sources:\n  memnfo: {enabled: true}\n", "sources.memnfo", 2, "did you mean 'meminfo'"},
        BadConfig{"sources:\n  zzz: {enabled: true}\n", "sources.zzz", 2, "expected one of"},
        BadConfig{"sources:\n  vm_sysctl:\n    refresh_interval: 2h\n", "sources.vm_sysctl.refresh_interval", 3,
                  "between 0s"},
        BadConfig{"log: {level: info}\nlog: {level: debug}\n", "log", 2, "duplicate key"},
        BadConfig{"web: [1, 2]\n", "web", 1, "expected a mapping"},
        BadConfig{"- just\n- a list\n", "<root>", 1, "expected a mapping"},
        BadConfig{"web:\n  listen_address: {a: [1,\n", "<yaml>", 3, "not valid YAML"},
        BadConfig{"\nwebb: {}\n", "webb", 2, "did you mean 'web'"},
        BadConfig{"sampler:\n  ring: \"5\"\n", "sampler.ring", 2, "quoted string"},
        BadConfig{"sources:\n  vmstat: {enabled: \"true\"}\n", "sources.vmstat.enabled", 2, "quoted string"},
        BadConfig{"sampler:\n  ring: 3601\n", "sampler.ring", 2, "between 1 and 3600"},
        BadConfig{"sources:\n  cgroup: {max_depth: 33}\n", "sources.cgroup.max_depth", 2, "between 0 and 32"},
        BadConfig{"sources:\n  cgroup: {max_cgroups: 0}\n", "sources.cgroup.max_cgroups", 2, "between 1 and 100000"},
        BadConfig{"sources:\n  cgroup:\n    include: \"/kubepods*\"\n", "sources.cgroup.include", 3, "a list of glob"},
        BadConfig{"sources:\n  cgroup:\n    exclude: [kubepods]\n", "sources.cgroup.exclude", 3, "starts with '/'"},
        BadConfig{"sources:\n  meminfo: {max_depth: 2}\n", "sources.meminfo.max_depth", 2, "unknown key"},
        BadConfig{"sources:\n  cgroup: {max_watched: 1001}\n", "sources.cgroup.max_watched", 2, "between 0 and 1000"},
        BadConfig{"diagnosis:\n  breaking:\n    map_areas_ratio: [0.9, 0.8]\n", "diagnosis.breaking.map_areas_ratio", 3,
                  "thresholds must ascend"},
        BadConfig{"diagnosis:\n  breaking:\n    cgroup_limit_ratio: [1.5]\n", "diagnosis.breaking.cgroup_limit_ratio", 3,
                  "between 0 and 1"},
        BadConfig{"diagnosis:\n  breaking: {oom_window: 1s}\n", "diagnosis.breaking.oom_window", 2, "between"},
        BadConfig{"diagnosis:\n  breaking: {max_items: 0}\n", "diagnosis.breaking.max_items", 2, "between 1 and 100"},
        BadConfig{"diagnosis:\n  breaking: {oom_windw: 5m}\n", "diagnosis.breaking.oom_windw", 2, "did you mean 'oom_window'"}),
    [](const ::testing::TestParamInfo<BadConfig>& info) {
      std::string name = std::to_string(info.index) + "_";
      for (const char* c = info.param.key; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name;
    });

TEST(Config, CgroupOptions) {
  auto config = parse_config(
      "sources:\n  cgroup:\n    max_depth: 3\n    include: [\"/kubepods*\", \"/system.slice/*\"]\n"
      "    exclude: [\"*conmon*\"]\n    max_cgroups: 50\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto options = config->source_options<CgroupOptions>("cgroup");
  EXPECT_EQ(options.cgroup_discovery.max_depth, 3);
  EXPECT_EQ(options.cgroup_discovery.include, (std::vector<std::string>{"/kubepods*", "/system.slice/*"}));
  EXPECT_EQ(options.cgroup_discovery.exclude, (std::vector<std::string>{"*conmon*"}));
  EXPECT_EQ(options.max_cgroups, 50u);
}

TEST(Config, ProcessOptions) {
  const auto defaults = default_config().source_options<ProcessOptions>("processes");
  EXPECT_EQ(defaults.process_scan, ProcessScanMode::kAuto);
  EXPECT_EQ(defaults.top_processes, 10u);
  EXPECT_DOUBLE_EQ(defaults.map_areas_threshold, 0.8);
  auto config = parse_config(
      "sources:\n  processes:\n    scanner: procfs\n    top_n: 3\n    map_areas_threshold: 0.25\n"
      "    max_above_threshold: 7\n    max_cgroups: 9\n    btf_path: /boot/vmlinux.btf\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto options = config->source_options<ProcessOptions>("processes");
  EXPECT_EQ(options.process_scan, ProcessScanMode::kProcfs);
  EXPECT_EQ(options.top_processes, 3u);
  EXPECT_DOUBLE_EQ(options.map_areas_threshold, 0.25);
  EXPECT_EQ(options.max_above_threshold, 7u);
  EXPECT_EQ(options.max_cgroups, 9u);
  EXPECT_EQ(options.btf_path, "/boot/vmlinux.btf");
}

TEST(Config, CanaryOptions) {
  const auto defaults = default_config().source_options<CanarySettings>("canary");
  EXPECT_EQ(defaults.interval, std::chrono::seconds(10));
  EXPECT_EQ(defaults.working_set_bytes, 16u << 20);
  EXPECT_EQ(defaults.restart_after, std::chrono::seconds(60));
  auto config = parse_config(
      "sources:\n  canary:\n    working_set_bytes: 134217728\n    ceiling_bytes: 268435456\n"
      "    interval: 30s\n    backoff_psi_full: 2.5\n    cgroups: [/kubepods/pod-a, /batch.slice]\n"
      "    restart_after: 5s\n",
      "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  const auto options = config->source_options<CanarySettings>("canary");
  EXPECT_EQ(options.working_set_bytes, 128u << 20);
  EXPECT_EQ(options.ceiling_bytes, 256u << 20);
  EXPECT_EQ(options.interval, std::chrono::seconds(30));
  EXPECT_DOUBLE_EQ(options.backoff_psi_full, 2.5);
  EXPECT_EQ(options.cgroups, (std::vector<std::string>{"/kubepods/pod-a", "/batch.slice"}));
  EXPECT_EQ(options.restart_after, std::chrono::seconds(5));
}

TEST(Config, EmptySectionsMeanDefaults) {
  auto config = parse_config("web:\nsampler:\nsources:\n  meminfo:\n", "x.yaml");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->listen_address, kDefaultListenAddress);
}

TEST(ConfigFile, DirectoryIsNotAConfig) {
  auto config = load_config_file("/etc");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().reason.find("not a regular file"), std::string::npos);
}

TEST(ConfigFile, MissingFileIsAnError) {
  auto config = load_config_file("/nonexistent/memdiagd.yaml");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().to_string().find("/nonexistent/memdiagd.yaml"), std::string::npos);
}

// The file is read in chunks into a buffer of its own size: a file just under the 1 MiB limit
// (a comment filling it) is read whole, one just over is refused.
TEST(ConfigFile, ReadsUpToOneMiBAndRefusesMore) {
  char path[] = "/tmp/memdiag-config-size-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string head = "sampler: {interval: 2s}\n#";
  const std::size_t limit = 1 << 20;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << head << std::string(limit - head.size() - 1, 'x') << "\n";  // exactly 1 MiB
  }
  auto whole = load_config_file(path);
  ASSERT_TRUE(whole) << whole.error().to_string();
  EXPECT_EQ(whole.value().interval, std::chrono::seconds(2));
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "#";  // one byte more
  }
  auto over = load_config_file(path);
  ::unlink(path);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().reason.find("larger than 1 MiB"), std::string::npos) << over.error().to_string();
}

TEST(ConfigError, FormatsFileLineKeyReason) {
  ConfigError e{"/etc/memdiagd.yaml", 7, "sampler.interval", "expected a duration"};
  EXPECT_EQ(e.to_string(), "/etc/memdiagd.yaml:7: sampler.interval: expected a duration");
}

TEST(Duration, Units) {
  EXPECT_EQ(*parse_duration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*parse_duration("1s"), std::chrono::milliseconds(1000));
  EXPECT_EQ(*parse_duration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*parse_duration("2m"), std::chrono::milliseconds(120000));
  EXPECT_EQ(*parse_duration("1h"), std::chrono::milliseconds(3600000));
  EXPECT_FALSE(parse_duration("1"));
  EXPECT_FALSE(parse_duration("s"));
  EXPECT_FALSE(parse_duration("1 s"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("1e400s"));
}

// On the command line (diagnose --duration 5, record --duration 5) a bare number is seconds.
TEST(Duration, CommandLineTakesABareNumberAsSeconds) {
  EXPECT_EQ(*parse_command_line_duration("5"), std::chrono::milliseconds(5000));
  EXPECT_EQ(*parse_command_line_duration("0.5"), std::chrono::milliseconds(500));
  EXPECT_EQ(*parse_command_line_duration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*parse_command_line_duration("2m"), std::chrono::milliseconds(120000));
  EXPECT_FALSE(parse_command_line_duration(""));
  EXPECT_FALSE(parse_command_line_duration("5x"));
  EXPECT_FALSE(parse_command_line_duration("-5"));
  EXPECT_FALSE(parse_command_line_duration("1..2"));
  EXPECT_FALSE(parse_command_line_duration("99999999999999"));
}

TEST(ListenAddress, Forms) {
  EXPECT_TRUE(check_listen_address("0.0.0.0:9842"));
  EXPECT_TRUE(check_listen_address(":9842"));
  EXPECT_TRUE(check_listen_address("[::1]:9842"));
  EXPECT_TRUE(check_listen_address("127.0.0.1:1"));
  // A name may resolve to several addresses and only one would be bound: refused.
  EXPECT_FALSE(check_listen_address("localhost:9842"));
  EXPECT_FALSE(check_listen_address("127.1:9842"));  // inet_aton's short form is not an address here
  EXPECT_FALSE(check_listen_address("9842"));
  EXPECT_FALSE(check_listen_address("host:0"));
  EXPECT_FALSE(check_listen_address("host:port"));
  EXPECT_FALSE(check_listen_address("[::1:9842"));
  EXPECT_FALSE(check_listen_address("[\x91:1]:9842"));                 // found by fuzz_config_values
  EXPECT_FALSE(check_listen_address("[::1]:9842,0.0.0.0:9843]:9842"));  // two addresses in one
  EXPECT_FALSE(check_listen_address("a b:80"));
}

TEST(Cli, FlagsOverrideTheFile) {
  auto options = parse_cli({"--config", MEMDIAG_SOURCE_DIR "/deploy/memdiagd.yaml", "--web.listen-address=127.0.0.1:1234",
                            "--path.procfs", "/fixture/proc", "--log.level", "warn"});
  ASSERT_TRUE(options) << options.error().message;
  auto config = resolve_config(*options);
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->listen_address, "127.0.0.1:1234");
  EXPECT_EQ(config->paths.procfs, "/fixture/proc");
  EXPECT_EQ(config->log_level, "warn");
}

TEST(Cli, LogFileAndConsoleAreParsed) {
  auto options = parse_cli({"--log.file=C:\\logs\\memdiagd.log", "--console"});
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->log_file, "C:\\logs\\memdiagd.log");
  EXPECT_TRUE(options->console);
  EXPECT_FALSE(parse_cli({"--console=yes"}));
  EXPECT_FALSE(parse_cli({"--log.file"}));
  EXPECT_FALSE(parse_cli({"--consol"}));
  EXPECT_FALSE(parse_cli({}).value().console);
}

TEST(Cli, BadFlagsAreRefusedWithTheFlagNamed) {
  EXPECT_FALSE(parse_cli({"--web.listen-adress", "x"}));
  EXPECT_NE(parse_cli({"--web.listen-adress", "x"}).error().message.find("did you mean '--web.listen-address'"),
            std::string::npos);
  EXPECT_FALSE(parse_cli({"--config"}));
  EXPECT_FALSE(parse_cli({"--check-config"}));  // needs --config
  EXPECT_FALSE(parse_cli({"--once=yes"}));
  auto options = parse_cli({"--log.level", "loud"});
  ASSERT_TRUE(options);
  auto config = resolve_config(*options);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().key, "--log.level");
}

}  // namespace
}  // namespace memdiag
