// SPDX-License-Identifier: Apache-2.0
// YAML -> Config with every key checked: type, range, and no unknown keys. yaml-cpp reports
// 0-based marks; messages use 1-based lines like editors do.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "daemon/config.hpp"
#include "daemon/config_values.hpp"
#include "daemon/yaml_option_value.hpp"
#include "probes/catalog/source_catalog.hpp"

namespace memdiag {

std::string ConfigError::to_string() const {
  std::string out = file.empty() ? std::string("<config>") : file;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!key.empty()) out += key + ": ";
  out += reason;
  return out;
}

Config default_config() {
  Config config;
  for (const SourceRegistration& source : source_catalog()) {
    config.sources[std::string(source.name)] = SourceConfig{true, source.defaults};
  }
  return config;
}

namespace {

// Thrown only inside this file and turned into a ConfigError value at its edge.
struct Refusal {
  ConfigError error;
};

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  Config load(const YAML::Node& root) {
    Config config = default_config();
    config.file = file_;
    if (!root || root.IsNull()) return config;  // empty file: all defaults
    expect_map(root, "");
    for_each_key(root, "", {"web", "paths", "sampler", "log", "daemon", "sources", "diagnosis"},
                 [&](const std::string& key, const YAML::Node& value) {
      if (value.IsNull()) return;  // an empty section: its defaults
      if (key == "web") load_web(value, config);
      if (key == "paths") load_paths(value, config);
      if (key == "sampler") load_sampler(value, config);
      if (key == "log") load_log(value, config);
      if (key == "daemon") load_daemon(value, config);
      if (key == "sources") load_sources(value, config);
      if (key == "diagnosis") load_diagnosis(value, config);
    });
    return config;
  }

 private:
  [[noreturn]] void refuse(const YAML::Node& at, const std::string& key, const std::string& reason) const {
    throw Refusal{ConfigError{file_, at.Mark().line + 1, key, reason}};
  }

  static std::string join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }

  // Sections may be left empty ("web:" alone): the loaders skip null sections, meaning defaults.
  void expect_map(const YAML::Node& node, const std::string& key) const {
    if (!node.IsMap()) refuse(node, key.empty() ? "<root>" : key, "expected a mapping (key: value lines)");
  }

  // Visits each key of a mapping, refusing unknown and duplicate keys.
  void for_each_key(const YAML::Node& map, const std::string& prefix, const std::vector<std::string_view>& known,
                    const std::function<void(const std::string&, const YAML::Node&)>& visit) const {
    std::set<std::string> seen;
    for (const auto& entry : map) {
      const YAML::Node& key_node = entry.first;
      if (!key_node.IsScalar()) refuse(key_node, prefix.empty() ? "<root>" : prefix, "keys must be plain words");
      const std::string key = key_node.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string reason = "unknown key";
        if (auto hint = closest_match(key, known)) {
          reason += "; did you mean '" + *hint + "'?";
        } else {
          reason += "; expected one of:";
          for (std::string_view k : known) reason += " " + std::string(k);
        }
        refuse(key_node, join(prefix, key), reason);
      }
      if (!seen.insert(key).second) refuse(key_node, join(prefix, key), "duplicate key");
      visit(key, entry.second);
    }
  }

  // A typed read of a value, or its refusal (at the value's own line) under `key`.
  template <class T>
  T take(OptionResult<T> result, const YAML::Node& at, const std::string& key) const {
    if (!result) refuse_at(result.error(), at, key);
    return std::move(result).value();
  }
  [[noreturn]] void refuse_at(const OptionError& error, const YAML::Node& at, const std::string& key) const {
    throw Refusal{ConfigError{file_, error.line > 0 ? error.line : at.Mark().line + 1, key, error.reason}};
  }

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    return take(YamlOptionValue(node).text(), node, key);
  }
  long long integer(const YAML::Node& node, const std::string& key) const {
    return take(YamlOptionValue(node).integer(), node, key);
  }

  void check(const Status& status, const YAML::Node& node, const std::string& key) const {
    if (!status) refuse(node, key, status.error().message);
  }

  void load_web(const YAML::Node& node, Config& config) const {
    expect_map(node, "web");
    for_each_key(node, "web", {"listen_address", "config_file", "unix_socket"},
                 [&](const std::string& key, const YAML::Node& value) {
      if (key == "unix_socket") {
        config.unix_socket = scalar(value, "web.unix_socket");
        check(check_unix_socket_path(config.unix_socket), value, "web.unix_socket");
        return;
      }
      if (key == "config_file") {
        // Checked with the rest of the config by whoever loads it (load_web_security), so
        // that its own errors name its own file and line.
        config.web_config_file = relative_to_this_file(scalar(value, "web.config_file"));
        return;
      }
      config.listen_address = scalar(value, "web.listen_address");
      check(check_listen_address(config.listen_address), value, "web.listen_address");
    });
  }

  // A path written in this file, relative to its directory (the web config's own paths are
  // relative to it in turn, as the exporter-toolkit has it).
  std::string relative_to_this_file(const std::string& path) const {
    if (path.empty() || path.front() == '/' || file_.empty()) return path;
    const std::size_t slash = file_.rfind('/');
    return slash == std::string::npos ? path : file_.substr(0, slash + 1) + path;
  }

  void load_paths(const YAML::Node& node, Config& config) const {
    expect_map(node, "paths");
    for_each_key(node, "paths", {"procfs", "sysfs"}, [&](const std::string& key, const YAML::Node& value) {
      const std::string full = "paths." + key;
      std::string path = scalar(value, full);
      check(check_directory_path(path), value, full);
      (key == "procfs" ? config.paths.procfs : config.paths.sysfs) = path;
    });
  }

  void load_sampler(const YAML::Node& node, Config& config) const {
    expect_map(node, "sampler");
    for_each_key(node, "sampler", {"interval", "ring"}, [&](const std::string& key, const YAML::Node& value) {
      if (key == "interval") {
        const auto interval = take(YamlOptionValue(value).duration(), value, "sampler.interval");
        check(check_interval(interval), value, "sampler.interval");
        config.interval = interval;
      } else {
        const long long ring = integer(value, "sampler.ring");
        check(check_ring(ring), value, "sampler.ring");
        config.ring = static_cast<std::size_t>(ring);
      }
    });
  }

  void load_log(const YAML::Node& node, Config& config) const {
    expect_map(node, "log");
    for_each_key(node, "log", {"level"}, [&](const std::string&, const YAML::Node& value) {
      config.log_level = scalar(value, "log.level");
      check(check_log_level(config.log_level), value, "log.level");
    });
  }

  void load_daemon(const YAML::Node& node, Config& config) const {
    expect_map(node, "daemon");
    for_each_key(node, "daemon", {"lock_memory", "drop_capabilities"}, [&](const std::string& key, const YAML::Node& value) {
      const bool on = take(YamlOptionValue(value).boolean(), value, "daemon." + key);
      (key == "lock_memory" ? config.lock_memory : config.drop_capabilities) = on;
    });
  }

  // Each source's section: `enabled`, then the keys its registration declares, read by the
  // registration itself; keys it does not declare are refused like any unknown key.
  void load_sources(const YAML::Node& node, Config& config) const {
    expect_map(node, "sources");
    std::vector<std::string_view> names;
    for (const SourceRegistration& source : source_catalog()) names.push_back(source.name);
    for_each_key(node, "sources", names, [&](const std::string& name, const YAML::Node& value) {
      const std::string prefix = "sources." + name;
      if (value.IsNull()) return;  // "meminfo:" with nothing under it: defaults
      expect_map(value, prefix);
      const SourceRegistration& registration = *find_source(name);
      std::vector<std::string_view> keys = {"enabled"};
      keys.insert(keys.end(), registration.keys.begin(), registration.keys.end());
      SourceConfig& source = config.sources[name];
      for_each_key(value, prefix, keys, [&](const std::string& key, const YAML::Node& v) {
        const std::string full = prefix + "." + key;
        const YamlOptionValue option(v);
        if (key == "enabled") {
          source.enabled = take(option.boolean(), v, full);
          return;
        }
        if (auto read = registration.read(key, option, source.options); !read) refuse_at(read.error(), v, full);
      });
      if (auto refusal = registration.check_together(source.options)) {
        const YAML::Node at = value[refusal->key] ? value[refusal->key] : value;
        refuse(at, prefix + "." + refusal->key, refusal->reason);
      }
    });
  }

  // A list of 1 to 4 ascending numbers in [low, high]: the thresholds of the levels low,
  // medium, high and critical; the levels not given are never reached.
  LevelThresholds levels(const YAML::Node& node, const std::string& key, double low, double high) const {
    if (!node.IsSequence() || node.size() < 1 || node.size() > 4) {
      refuse(node, key, "expected a list of 1 to 4 ascending numbers, the thresholds of low, medium, high, critical");
    }
    LevelThresholds out{kNever, kNever, kNever, kNever};
    for (std::size_t i = 0; i < node.size(); ++i) {
      const double value = take(YamlOptionValue(node[i]).number(), node[i], key);
      if (value < low || value > high) {
        refuse(node[i], key, "must be between " + format_number(low) + " and " + format_number(high) + ", got " +
                                 format_number(value));
      }
      if (i > 0 && value <= out[i - 1]) refuse(node[i], key, "thresholds must ascend, got " + format_number(value) +
                                                                  " after " + format_number(out[i - 1]));
      out[i] = value;
    }
    return out;
  }
  double number(const YAML::Node& node, const std::string& key, double low, double high) const {
    const double value = take(YamlOptionValue(node).number(), node, key);
    if (value < low || value > high) {
      refuse(node, key, "must be between " + format_number(low) + " and " + format_number(high) + ", got " +
                            format_number(value));
    }
    return value;
  }
  double ratio(const YAML::Node& node, const std::string& key) const {
    const double value = take(YamlOptionValue(node).number(), node, key);
    if (value < 0 || value > 1) refuse(node, key, "a ratio from 0 to 1, got " + format_number(value));
    return value;
  }
  std::chrono::milliseconds duration_between(const YAML::Node& node, const std::string& key,
                                             std::chrono::milliseconds low, std::chrono::milliseconds high) const {
    const auto value = take(YamlOptionValue(node).duration(), node, key);
    if (value < low || value > high) {
      refuse(node, key, "must be between " + std::to_string(low.count()) + "ms and " + std::to_string(high.count()) +
                            "ms, got " + std::to_string(value.count()) + "ms");
    }
    return value;
  }

  void load_diagnosis(const YAML::Node& node, Config& config) const {
    expect_map(node, "diagnosis");
    for_each_key(node, "diagnosis", {"stall", "overcommit", "roles", "forecast", "breaking"},
                 [&](const std::string& key, const YAML::Node& value) {
                   if (value.IsNull()) return;
                   if (key == "stall") load_stall(value, config.diagnosis.stall);
                   if (key == "overcommit") load_overcommit(value, config.diagnosis.overcommit);
                   if (key == "roles") load_roles(value, config.diagnosis.roles);
                   if (key == "forecast") load_forecast(value, config.diagnosis.forecast);
                   if (key == "breaking") load_breaking(value, config.diagnosis.breaking);
                 });
  }

  void load_breaking(const YAML::Node& node, analysis::BreakingSettings& b) const {
    const std::string prefix = "diagnosis.breaking";
    expect_map(node, prefix);
    for_each_key(node, prefix,
                 {"map_areas_ratio", "cgroup_limit_ratio", "allocator_ceiling_ratio", "oom_window", "max_items",
                  "near_limit_ratio"},
                 [&](const std::string& key, const YAML::Node& v) {
                   const std::string full = prefix + "." + key;
                   using std::chrono::milliseconds;
                   if (key == "map_areas_ratio") b.map_areas_ratio = levels(v, full, 0, 1);
                   if (key == "cgroup_limit_ratio") b.cgroup_limit_ratio = levels(v, full, 0, 1);
                   if (key == "allocator_ceiling_ratio") b.allocator_ceiling_ratio = levels(v, full, 0, 1);
                   if (key == "oom_window") {
                     b.oom_window = duration_between(v, full, milliseconds(10000), milliseconds(24 * 3600 * 1000));
                   }
                   if (key == "near_limit_ratio") b.oom.near_limit_ratio = ratio(v, full);
                   if (key == "max_items") {
                     const long long n = integer(v, full);
                     if (n < 1 || n > 100) refuse(v, full, "must be between 1 and 100, got " + std::to_string(n));
                     b.max_items = static_cast<std::size_t>(n);
                   }
                 });
  }

  void load_stall(const YAML::Node& node, analysis::StallThresholds& t) const {
    const std::string prefix = "diagnosis.stall";
    expect_map(node, prefix);
    for_each_key(node, prefix,
                 {"window", "hold", "thrashing_window", "sustain", "long_window", "psi_some", "psi_full",
                  "stall_seconds_per_second", "refault_ratio", "refault_min_pages_per_second", "reclaim_inefficiency",
                  "swap_exhausted_free_ratio", "fault_latency_ratio", "pages_input_per_second",
                  "global_scan_min_pages_per_second"},
                 [&](const std::string& key, const YAML::Node& v) {
                   const std::string full = prefix + "." + key;
                   using std::chrono::milliseconds;
                   if (key == "window") t.window = duration_between(v, full, milliseconds(500), milliseconds(60000));
                   if (key == "hold") t.hold = duration_between(v, full, milliseconds(0), milliseconds(600000));
                   if (key == "thrashing_window") {
                     t.thrashing_window = duration_between(v, full, milliseconds(1000), milliseconds(600000));
                   }
                   if (key == "sustain") t.sustain = duration_between(v, full, milliseconds(0), milliseconds(60000));
                   if (key == "long_window") {
                     t.long_window = duration_between(v, full, milliseconds(1000), milliseconds(600000));
                   }
                   if (key == "global_scan_min_pages_per_second") {
                     t.global_scan_min_pages_per_second = number(v, full, 0, 1e9);
                   }
                   if (key == "psi_some") t.psi_some = levels(v, full, 0, 1);
                   if (key == "psi_full") t.psi_full = levels(v, full, 0, 1);
                   if (key == "stall_seconds_per_second") t.stall_seconds_per_second = levels(v, full, 0, 1e6);
                   if (key == "refault_ratio") t.refault_ratio = levels(v, full, 0, 1e6);
                   if (key == "reclaim_inefficiency") t.reclaim_inefficiency = levels(v, full, 0, 1);
                   if (key == "fault_latency_ratio") t.fault_latency_ratio = levels(v, full, 1, 1e6);
                   if (key == "pages_input_per_second") t.pages_input_per_second = levels(v, full, 0, 1e9);
                   if (key == "refault_min_pages_per_second") t.refault_min_pages_per_second = number(v, full, 0, 1e9);
                   if (key == "swap_exhausted_free_ratio") t.swap_exhausted_free_ratio = ratio(v, full);
                 });
  }

  void load_overcommit(const YAML::Node& node, analysis::OvercommitThresholds& t) const {
    const std::string prefix = "diagnosis.overcommit";
    expect_map(node, prefix);
    for_each_key(node, prefix,
                 {"unbacked_to_supply", "commit_limit_ratio", "commit_headroom_critical_bytes",
                  "cgroup_limit_overcommit"},
                 [&](const std::string& key, const YAML::Node& v) {
                   const std::string full = prefix + "." + key;
                   if (key == "unbacked_to_supply") t.unbacked_to_supply = levels(v, full, 0, 1e6);
                   if (key == "commit_limit_ratio") t.commit_limit_ratio = levels(v, full, 0, 10);
                   if (key == "cgroup_limit_overcommit") t.cgroup_limit_overcommit = levels(v, full, 0, 1e6);
                   if (key == "commit_headroom_critical_bytes") {
                     const long long bytes = integer(v, full);
                     if (bytes < 0) refuse(v, full, "a number of bytes, 0 or more, got " + std::to_string(bytes));
                     t.commit_headroom_critical_bytes = static_cast<std::uint64_t>(bytes);
                   }
                 });
  }

  void load_roles(const YAML::Node& node, analysis::RoleSettings& r) const {
    const std::string prefix = "diagnosis.roles";
    expect_map(node, prefix);
    for_each_key(node, prefix,
                 {"contributor_min_scope_ratio", "similar_ratio", "promise_weight", "headroom_ratio",
                  "growth_half_life", "max_members"},
                 [&](const std::string& key, const YAML::Node& v) {
                   const std::string full = prefix + "." + key;
                   using std::chrono::milliseconds;
                   if (key == "similar_ratio") r.similar_ratio = ratio(v, full);
                   if (key == "contributor_min_scope_ratio") r.contributor_min_scope_ratio = ratio(v, full);
                   if (key == "promise_weight") r.promise_weight = ratio(v, full);
                   if (key == "headroom_ratio") r.headroom_ratio = ratio(v, full);
                   if (key == "growth_half_life") {
                     r.growth_half_life = duration_between(v, full, milliseconds(1000), milliseconds(600000));
                   }
                   if (key == "max_members") {
                     const long long n = integer(v, full);
                     if (n < 1 || n > 100) refuse(v, full, "must be between 1 and 100, got " + std::to_string(n));
                     r.max_members = static_cast<std::size_t>(n);
                   }
                 });
  }

  void load_forecast(const YAML::Node& node, analysis::ForecastSettings& f) const {
    const std::string prefix = "diagnosis.forecast";
    expect_map(node, prefix);
    for_each_key(node, prefix, {"window", "min_fit", "horizon"}, [&](const std::string& key, const YAML::Node& v) {
      const std::string full = prefix + "." + key;
      using std::chrono::milliseconds;
      if (key == "window") f.window = duration_between(v, full, milliseconds(10000), milliseconds(3600 * 1000));
      if (key == "min_fit") f.min_fit = ratio(v, full);
      if (key == "horizon") f.horizon = duration_between(v, full, milliseconds(1000), milliseconds(24 * 3600 * 1000));
    });
  }

  static std::string format_number(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  }

  static constexpr double kNever = 1e300;

  std::string file_;
};

}  // namespace

ConfigResult parse_config(std::string_view yaml_text, const std::string& file) {
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    return Loader(file).load(root);
  } catch (const Refusal& r) {
    return r.error;
  } catch (const YAML::Exception& e) {
    return ConfigError{file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "<yaml>", "not valid YAML: " + e.msg};
  }
}

ConfigResult load_config_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = 1 << 20;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    return ConfigError{path, 0, "", "cannot read the file: " + std::string(std::strerror(errno))};
  }
  if (!S_ISREG(st.st_mode)) return ConfigError{path, 0, "", "not a regular file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return ConfigError{path, 0, "", "cannot read the file: " + std::string(std::strerror(errno))};
  // Read in chunks into a buffer sized by the file, not by the limit: a 1 MiB buffer per
  // reload raised glibc's mmap threshold and then stayed in the heap as ~1 MiB of resident free
  // memory. Reading past the limit tells a file that is too large (or grew since the stat).
  std::string text;
  text.reserve(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), kMaxBytes) + 1);
  char chunk[16384];
  while (text.size() <= kMaxBytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (!in) break;  // end of file (or a read error: what was read is parsed, as before)
  }
  if (text.size() > kMaxBytes) return ConfigError{path, 0, "", "larger than 1 MiB; not a config file"};
  return parse_config(text, path);
}

}  // namespace memdiag
