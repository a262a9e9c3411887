// SPDX-License-Identifier: Apache-2.0
// A source is one registration: its name (the key of its `sources:` config section), the
// platform it runs on, its options type with their defaults and validation, and its factory,
// declared together in the source's own file (see any *_registration.cpp). The daemon knows no
// source by name: it loads, compares and builds them all through this record, and a platform's
// catalog (probes/catalog) lists the registrations of one build.
#pragma once

#include <any>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/core/kernel_paths.hpp"
#include "probes/core/option_value.hpp"
#include "probes/core/source.hpp"

namespace memdiag {

enum class Platform : std::uint8_t { kLinux, kWindows, kAny };

// What every source is built with besides its own options.
struct SourceContext {
  KernelPaths paths;
};

// A refusal of options taken together (one value against another), blamed on one key.
struct KeyRefusal {
  std::string key;
  std::string reason;
};

// One option key of a source and how it reads its value into the source's options.
template <class Options>
struct OptionKey {
  std::string_view name;
  std::function<OptionStatus(const OptionValue& value, Options& options)> read{};
};

// What a source declares, with its own options type.
template <class Options>
struct SourceSpec {
  std::string_view name;
  Platform platform = Platform::kLinux;
  Options defaults{};
  std::vector<OptionKey<Options>> keys{};  // besides `enabled`, which every source has
  // After every key was read: what only the keys together can tell.
  std::function<std::optional<KeyRefusal>(const Options&)> check_together{};
  std::function<std::unique_ptr<Source>(const SourceContext&, const Options&)> make{};
  // Rebuilt on every reload even when nothing of it changed: it serves cached values between
  // refreshes, and a SIGHUP is how an administrator makes it read again at once.
  bool rebuild_on_reload = false;
};

// The same, with the options type erased (held in std::any), as the daemon handles it.
struct SourceRegistration {
  std::string_view name;
  Platform platform = Platform::kLinux;
  std::any defaults;
  std::vector<std::string_view> keys;
  std::function<OptionStatus(std::string_view key, const OptionValue& value, std::any& options)> read;
  std::function<std::optional<KeyRefusal>(const std::any& options)> check_together;
  std::function<std::unique_ptr<Source>(const SourceContext&, const std::any& options)> make;
  std::function<bool(const std::any& a, const std::any& b)> same_options;
  bool rebuild_on_reload = false;
};

template <class Options>
SourceRegistration register_source(SourceSpec<Options> spec) {
  SourceRegistration r;
  r.name = spec.name;
  r.platform = spec.platform;
  r.defaults = std::move(spec.defaults);
  for (const auto& key : spec.keys) r.keys.push_back(key.name);
  r.read = [keys = std::move(spec.keys)](std::string_view key, const OptionValue& value,
                                         std::any& options) -> OptionStatus {
    for (const auto& k : keys) {
      if (k.name == key) return k.read(value, std::any_cast<Options&>(options));
    }
    return value.refuse("unknown key");  // the loader checks keys first; never reached
  };
  r.check_together = [check = std::move(spec.check_together)](const std::any& options) -> std::optional<KeyRefusal> {
    if (!check) return std::nullopt;
    return check(std::any_cast<const Options&>(options));
  };
  r.make = [make = std::move(spec.make)](const SourceContext& context, const std::any& options) {
    return make(context, std::any_cast<const Options&>(options));
  };
  r.same_options = [](const std::any& a, const std::any& b) {
    return std::any_cast<const Options&>(a) == std::any_cast<const Options&>(b);
  };
  r.rebuild_on_reload = spec.rebuild_on_reload;
  return r;
}

// A source without options of its own.
struct NoOptions {
  bool operator==(const NoOptions&) const = default;
};

}  // namespace memdiag
