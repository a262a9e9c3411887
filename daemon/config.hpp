// The daemon's configuration: what deploy/memdiagd.yaml documents, after validation.
// Every field has a default, so an absent file or section means "the defaults".
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "probes/core/expected.hpp"
#include "probes/linux/linux_sources.hpp"

namespace memdiag {

inline constexpr const char* kDefaultListenAddress = "0.0.0.0:9842";

struct SourceConfig {
  bool enabled = true;
  SourceOptions options;
};

// vm sysctls change by hand, rarely: re-read them every 10 s rather than every sample.
inline constexpr std::chrono::milliseconds kDefaultSysctlRefresh{10000};

struct Config {
  std::string listen_address = kDefaultListenAddress;
  KernelPaths paths;
  std::chrono::milliseconds interval{1000};
  std::size_t ring = 300;
  std::string log_level = "info";
  std::map<std::string, SourceConfig, std::less<>> sources;  // every known source, by name

  // Where it was loaded from ("" for built-in defaults), for messages.
  std::string file;

  bool source_enabled(std::string_view name) const {
    auto it = sources.find(name);
    return it != sources.end() && it->second.enabled;
  }
  SourceOptions source_options(std::string_view name) const {
    auto it = sources.find(name);
    return it == sources.end() ? SourceOptions{} : it->second.options;
  }
};

// Why a config was refused: enough to find and fix it without reading code.
struct ConfigError {
  std::string file;
  int line = 0;      // 1-based; 0 when not tied to a line (a flag, an unreadable file)
  std::string key;   // dotted path, e.g. "sampler.interval"
  std::string reason;

  // "FILE:LINE: KEY: REASON"
  std::string to_string() const;
};

using ConfigResult = Expected<Config, ConfigError>;

Config default_config();

// Parses and validates YAML text; `file` names it in errors.
ConfigResult parse_config(std::string_view yaml_text, const std::string& file);

// Reads and parses a file.
ConfigResult load_config_file(const std::string& path);

}  // namespace memdiag
