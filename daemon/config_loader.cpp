// YAML -> Config with every key checked: type, range, and no unknown keys. yaml-cpp reports
// 0-based marks; messages use 1-based lines like editors do.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "daemon/config.hpp"
#include "daemon/config_values.hpp"
#include "daemon/source_names.hpp"

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
  for (std::string_view name : source_names()) {
    SourceConfig source;
    if (source_has_refresh_interval(name)) source.options.refresh_interval = kDefaultSysctlRefresh;
    config.sources[std::string(name)] = source;
  }
  return config;
}

namespace {

constexpr std::size_t kCanaryCeilingMargin = 1u << 20;
constexpr std::size_t kMaxCanaryCgroups = 32;

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
    for_each_key(root, "", {"web", "paths", "sampler", "log", "sources"}, [&](const std::string& key, const YAML::Node& value) {
      if (value.IsNull()) return;  // an empty section: its defaults
      if (key == "web") load_web(value, config);
      if (key == "paths") load_paths(value, config);
      if (key == "sampler") load_sampler(value, config);
      if (key == "log") load_log(value, config);
      if (key == "sources") load_sources(value, config);
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

  std::string scalar(const YAML::Node& node, const std::string& key) const {
    if (node.IsNull()) refuse(node, key, "expected a value, got nothing");
    if (!node.IsScalar()) refuse(node, key, "expected a single value, not a list or mapping");
    return node.Scalar();
  }

  // Numbers and booleans must be written plainly: "5" and "true" in quotes are strings.
  std::string plain_scalar(const YAML::Node& node, const std::string& key, const char* what) const {
    std::string text = scalar(node, key);
    if (node.Tag() == "!") refuse(node, key, std::string("expected ") + what + ", got the quoted string \"" + text + "\"");
    return text;
  }

  bool boolean(const YAML::Node& node, const std::string& key) const {
    const std::string text = plain_scalar(node, key, "true or false");
    if (text == "true") return true;
    if (text == "false") return false;
    refuse(node, key, "expected true or false, got '" + text + "'");
  }

  long long integer(const YAML::Node& node, const std::string& key) const {
    const std::string text = plain_scalar(node, key, "a whole number");
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      refuse(node, key, "expected a whole number, got '" + text + "'");
    }
    return value;
  }

  // A plain decimal number such as 0.8 (from_chars: no locale, no hex, no "nan").
  double number(const YAML::Node& node, const std::string& key) const {
    const std::string text = plain_scalar(node, key, "a number");
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      refuse(node, key, "expected a number like 0.8, got '" + text + "'");
    }
    return value;
  }

  void check(const Status& status, const YAML::Node& node, const std::string& key) const {
    if (!status) refuse(node, key, status.error().message);
  }

  void load_web(const YAML::Node& node, Config& config) const {
    expect_map(node, "web");
    for_each_key(node, "web", {"listen_address"}, [&](const std::string&, const YAML::Node& value) {
      config.listen_address = scalar(value, "web.listen_address");
      check(check_listen_address(config.listen_address), value, "web.listen_address");
    });
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
        auto interval = parse_duration(scalar(value, "sampler.interval"));
        if (!interval) refuse(value, "sampler.interval", interval.error().message);
        check(check_interval(*interval), value, "sampler.interval");
        config.interval = *interval;
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

  void load_sources(const YAML::Node& node, Config& config) const {
    expect_map(node, "sources");
    for_each_key(node, "sources", source_names(), [&](const std::string& name, const YAML::Node& value) {
      const std::string prefix = "sources." + name;
      if (value.IsNull()) return;  // "meminfo:" with nothing under it: defaults
      expect_map(value, prefix);
      std::vector<std::string_view> keys = {"enabled"};
      if (source_has_refresh_interval(name)) keys.push_back("refresh_interval");
      if (name == "cgroup") keys.insert(keys.end(), {"max_depth", "include", "exclude", "max_cgroups", "max_watched"});
      if (name == "reclaim_stall") {
        keys.insert(keys.end(), {"btf_path", "tracefs_fallback", "max_cgroups", "retain_removed"});
      }
      if (name == "canary") {
        keys.insert(keys.end(), {"interval", "working_set_bytes", "ceiling_bytes", "backoff_psi_full", "cgroups"});
      }
      if (name == "processes") {
        keys.insert(keys.end(), {"scanner", "btf_path", "top_n", "map_areas_threshold", "max_above_threshold",
                                 "max_cgroups"});
      }
      SourceConfig& source = config.sources[name];
      for_each_key(value, prefix, keys, [&](const std::string& key, const YAML::Node& v) {
        const std::string full = prefix + "." + key;
        if (key == "enabled") {
          source.enabled = boolean(v, full);
        } else if (key == "refresh_interval") {
          auto refresh = parse_duration(scalar(v, full));
          if (!refresh) refuse(v, full, refresh.error().message);
          check(check_refresh_interval(*refresh), v, full);
          source.options.refresh_interval = *refresh;
        } else if (key == "max_depth") {
          const long long depth = integer(v, full);
          if (depth < 0 || depth > 32) refuse(v, full, "must be between 0 and 32, got " + std::to_string(depth));
          source.options.cgroup_discovery.max_depth = static_cast<int>(depth);
        } else if (key == "max_watched") {
          const long long watched = integer(v, full);
          if (watched < 0 || watched > 1000) refuse(v, full, "must be between 0 and 1000, got " + std::to_string(watched));
          source.options.max_watched_cgroups = static_cast<std::size_t>(watched);
        } else if (key == "btf_path") {
          source.options.btf_path = scalar(v, full);
          if (source.options.btf_path.empty() || source.options.btf_path.front() != '/') {
            refuse(v, full, "an absolute path to a BTF file, like /sys/kernel/btf/vmlinux, got '" +
                                source.options.btf_path + "'");
          }
        } else if (key == "scanner") {
          const std::string scanner = scalar(v, full);
          if (scanner == "auto") {
            source.options.process_scan = ProcessScanMode::kAuto;
          } else if (scanner == "bpf_iter") {
            source.options.process_scan = ProcessScanMode::kBpfIter;
          } else if (scanner == "procfs") {
            source.options.process_scan = ProcessScanMode::kProcfs;
          } else {
            refuse(v, full, "one of auto, bpf_iter, procfs, got '" + scanner + "'");
          }
        } else if (key == "interval") {
          auto interval = parse_duration(scalar(v, full));
          if (!interval) refuse(v, full, interval.error().message);
          if (*interval < std::chrono::milliseconds(100) || *interval > std::chrono::hours(1)) {
            refuse(v, full, "between 100ms and 1h");
          }
          source.options.canary.interval = *interval;
        } else if (key == "working_set_bytes" || key == "ceiling_bytes") {
          const long long bytes = integer(v, full);
          if (bytes < 4096 || bytes > (1LL << 30)) refuse(v, full, "between 4096 and 1073741824 (1 GiB), got " + std::to_string(bytes));
          (key == "working_set_bytes" ? source.options.canary.working_set_bytes : source.options.canary.ceiling_bytes) =
              static_cast<std::size_t>(bytes);
        } else if (key == "backoff_psi_full") {
          const double percent = number(v, full);
          if (!(percent >= 0 && percent <= 100)) refuse(v, full, "a percentage from 0 to 100, got " + scalar(v, full));
          source.options.canary.backoff_psi_full = percent;
        } else if (key == "cgroups") {
          source.options.canary.cgroups = cgroup_paths(v, full);
        } else if (key == "top_n") {
          const long long n = integer(v, full);
          if (n < 0 || n > 1000) refuse(v, full, "must be between 0 and 1000, got " + std::to_string(n));
          source.options.top_processes = static_cast<std::size_t>(n);
        } else if (key == "max_above_threshold") {
          const long long n = integer(v, full);
          if (n < 0 || n > 10000) refuse(v, full, "must be between 0 and 10000, got " + std::to_string(n));
          source.options.max_above_threshold = static_cast<std::size_t>(n);
        } else if (key == "map_areas_threshold") {
          const double ratio = number(v, full);
          if (!(ratio > 0 && ratio <= 1)) {
            refuse(v, full, "a fraction of vm.max_map_count, above 0 and at most 1, got " + scalar(v, full));
          }
          source.options.map_areas_threshold = ratio;
        } else if (key == "tracefs_fallback") {
          source.options.tracefs_fallback = boolean(v, full);
        } else if (key == "retain_removed") {
          auto retain = parse_duration(scalar(v, full));
          if (!retain) refuse(v, full, retain.error().message);
          if (*retain > std::chrono::hours(24)) refuse(v, full, "at most 24h: removed cgroups must not pile up");
          source.options.retain_removed = *retain;
        } else if (key == "max_cgroups") {
          const long long cap = integer(v, full);
          if (cap < 1 || cap > 100000) refuse(v, full, "must be between 1 and 100000, got " + std::to_string(cap));
          source.options.max_cgroups = static_cast<std::size_t>(cap);
        } else {
          (key == "include" ? source.options.cgroup_discovery.include : source.options.cgroup_discovery.exclude) =
              patterns(v, full);
        }
      });
      // The allocator rounds small classes up to whole spans: 1 MiB of room keeps every cycle
      // under the ceiling.
      if (source.options.canary.working_set_bytes + kCanaryCeilingMargin > source.options.canary.ceiling_bytes) {
        refuse(value["working_set_bytes"] ? value["working_set_bytes"] : value, prefix + ".working_set_bytes",
               "must be at least 1 MiB below ceiling_bytes (" + std::to_string(source.options.canary.ceiling_bytes) +
                   ")");
      }
    });
  }

  // A list of memory cgroup paths, each absolute, without "..", each once; a child process runs
  // in each, so the list is short.
  std::vector<std::string> cgroup_paths(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) refuse(node, key, "expected a list of cgroup paths, like [\"/kubepods/pod-x\"]");
    if (node.size() > kMaxCanaryCgroups) {
      refuse(node, key, "at most " + std::to_string(kMaxCanaryCgroups) + " cgroups, got " + std::to_string(node.size()));
    }
    std::vector<std::string> out;
    for (const auto& item : node) {
      const std::string path = scalar(item, key);
      if (path.size() < 2 || path.front() != '/' || path.find("..") != std::string::npos) {
        refuse(item, key, "a cgroup path starting with '/' below the hierarchy root, without '..', got '" + path + "'");
      }
      if (std::find(out.begin(), out.end(), path) != out.end()) refuse(item, key, "'" + path + "' is listed twice");
      out.push_back(path);
    }
    return out;
  }

  // A list of glob patterns, each a non-empty string.
  std::vector<std::string> patterns(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) refuse(node, key, "expected a list of glob patterns, like [\"/kubepods*\"]");
    std::vector<std::string> out;
    for (const auto& item : node) {
      const std::string pattern = scalar(item, key);
      if (pattern.empty() || (pattern.front() != '/' && pattern.front() != '*')) {
        refuse(item, key, "a pattern matches a cgroup path and starts with '/' or '*', got '" + pattern + "'");
      }
      out.push_back(pattern);
    }
    return out;
  }

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
  std::string text(kMaxBytes + 1, '\0');  // one byte more than allowed tells "too large"
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes) return ConfigError{path, 0, "", "larger than 1 MiB; not a config file"};
  return parse_config(text, path);
}

}  // namespace memdiag
