// SPDX-License-Identifier: Apache-2.0
// A YAML node as an OptionValue (probes/core/option_value.hpp): the typed reads of config
// values, with the same words for every key of every section. yaml-cpp reports 0-based marks;
// lines here are 1-based like editors show them.
#pragma once

#include <yaml-cpp/yaml.h>

#include "probes/core/option_value.hpp"

namespace memdiag {

class YamlOptionValue final : public OptionValue {
 public:
  explicit YamlOptionValue(YAML::Node node) : node_(std::move(node)) {}

  OptionResult<bool> boolean() const override;
  OptionResult<long long> integer() const override;
  OptionResult<double> number() const override;
  OptionResult<std::string> text() const override;
  OptionResult<std::chrono::milliseconds> duration() const override;
  OptionResult<std::vector<std::unique_ptr<OptionValue>>> items(std::string_view expected) const override;
  OptionError refuse(std::string reason) const override;

  int line() const { return node_.Mark().line + 1; }

 private:
  // Numbers and booleans must be written plainly: "5" and "true" in quotes are strings.
  OptionResult<std::string> plain(const char* what) const;

  YAML::Node node_;
};

}  // namespace memdiag
