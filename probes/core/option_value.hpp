// SPDX-License-Identifier: Apache-2.0
// How a source reads its own options from the config file without knowing the file's format:
// the daemon hands each key's value over as an OptionValue (YAML today), whose typed reads
// refuse wrong types with the same words for every source, and the source refuses values out
// of its range with its own. Errors are values that carry where the value was written.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

// Why a value was refused. `line` is 1-based; 0 means the line of the key being read.
struct OptionError {
  std::string reason;
  int line = 0;
};

template <class T>
using OptionResult = Expected<T, OptionError>;
using OptionStatus = OptionResult<Ok>;

class OptionValue {
 public:
  virtual ~OptionValue() = default;

  // Numbers and booleans written plainly ("true", 5, 0.8): quoted ones are strings.
  virtual OptionResult<bool> boolean() const = 0;
  virtual OptionResult<long long> integer() const = 0;
  virtual OptionResult<double> number() const = 0;  // a plain decimal such as 0.8
  // Any single value, as written.
  virtual OptionResult<std::string> text() const = 0;
  // "500ms", "1s", "2m", "1h" (also "1.5s").
  virtual OptionResult<std::chrono::milliseconds> duration() const = 0;
  // The items of a list; refused with `expected` (what a list would look like) when it is not one.
  virtual OptionResult<std::vector<std::unique_ptr<OptionValue>>> items(std::string_view expected) const = 0;

  // A refusal placed at this value's own line (a list item's, not its key's).
  virtual OptionError refuse(std::string reason) const = 0;
};

// A whole number in [low, high], refused as "must be between LOW and HIGH, got N".
inline OptionResult<long long> integer_between(const OptionValue& value, long long low, long long high) {
  auto number = value.integer();
  if (!number) return number.error();
  if (*number < low || *number > high) {
    return value.refuse("must be between " + std::to_string(low) + " and " + std::to_string(high) + ", got " +
                        std::to_string(*number));
  }
  return *number;
}

// The same, stored into `field` (a count, a cap, a depth).
template <class Field>
OptionStatus read_integer_between(const OptionValue& value, long long low, long long high, Field& field) {
  auto number = integer_between(value, low, high);
  if (!number) return number.error();
  field = static_cast<Field>(*number);
  return Ok{};
}

// A list of single values, each passed to `check` (which refuses it at the item's own line, or
// returns Ok); `expected` is the refusal when the value is not a list at all.
template <class Check>
OptionResult<std::vector<std::string>> text_items(const OptionValue& value, std::string_view expected, Check check) {
  auto items = value.items(expected);
  if (!items) return items.error();
  std::vector<std::string> texts;
  for (const auto& item : *items) {
    auto text = item->text();
    if (!text) return text.error();
    if (OptionStatus checked = check(*item, *text, texts); !checked) return checked.error();
    texts.push_back(std::move(*text));
  }
  return texts;
}

}  // namespace memdiag
