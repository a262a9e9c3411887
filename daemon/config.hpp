// SPDX-License-Identifier: Apache-2.0
// The daemon's configuration: what deploy/memdiagd.yaml documents, after validation.
// Every field has a default, so an absent file or section means "the defaults".
#pragma once

#include <any>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>

#include "probes/analysis/diagnosis_settings.hpp"
#include "probes/core/expected.hpp"
#include "probes/core/kernel_paths.hpp"

namespace memdiag {

inline constexpr const char* kDefaultListenAddress = "0.0.0.0:9842";

// One source's section: whether it runs, and its own options, of the type its registration
// declares (probes/core/source_registration.hpp).
struct SourceConfig {
  bool enabled = true;
  std::any options;
};

struct Config {
  std::string listen_address = kDefaultListenAddress;
  // The exporter-toolkit web config (TLS, basic auth, response headers: web_config.hpp); empty:
  // none, plain HTTP for anyone (the default). Relative to the config file's directory when
  // given there, to the working directory when given as --web.config.file.
  std::string web_config_file;
  // A Unix domain socket serving the same endpoints to local root only (mode 0600, the peer's uid
  // checked), without the web config's TLS and basic auth; empty: none (the built-in default).
  // Linux only.
  std::string unix_socket;
  KernelPaths paths;
  std::chrono::milliseconds interval{1000};
  std::size_t ring = 300;
  std::string log_level = "info";
  // The daemon's own footing (Linux; applied at start, docs/operations.md "Hardening"): keep its memory
  // resident (mlockall), and give up the capabilities it no longer needs once its eBPF
  // programs are loaded.
  bool lock_memory = true;
  bool drop_capabilities = true;
  std::map<std::string, SourceConfig, std::less<>> sources;  // every source of the catalog, by name
  analysis::DiagnosisSettings diagnosis;                      // the verdicts' thresholds

  // Where it was loaded from ("" for built-in defaults), for messages.
  std::string file;

  bool source_enabled(std::string_view name) const {
    auto it = sources.find(name);
    return it != sources.end() && it->second.enabled;
  }
  // The source's options as its registration's type; throws std::bad_any_cast for another type.
  template <class Options>
  const Options& source_options(std::string_view name) const {
    auto it = sources.find(name);
    if (it == sources.end()) throw std::out_of_range("no source named " + std::string(name));
    return std::any_cast<const Options&>(it->second.options);
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
