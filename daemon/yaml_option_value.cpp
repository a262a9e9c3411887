// SPDX-License-Identifier: Apache-2.0
#include "daemon/yaml_option_value.hpp"

#include <charconv>

#include "daemon/config_values.hpp"

namespace memdiag {

OptionError YamlOptionValue::refuse(std::string reason) const { return OptionError{std::move(reason), line()}; }

OptionResult<std::string> YamlOptionValue::text() const {
  if (node_.IsNull()) return refuse("expected a value, got nothing");
  if (!node_.IsScalar()) return refuse("expected a single value, not a list or mapping");
  return node_.Scalar();
}

OptionResult<std::string> YamlOptionValue::plain(const char* what) const {
  auto text = this->text();
  if (text && node_.Tag() == "!") {
    return refuse(std::string("expected ") + what + ", got the quoted string \"" + *text + "\"");
  }
  return text;
}

OptionResult<bool> YamlOptionValue::boolean() const {
  auto text = plain("true or false");
  if (!text) return text.error();
  if (*text == "true") return true;
  if (*text == "false") return false;
  return refuse("expected true or false, got '" + *text + "'");
}

OptionResult<long long> YamlOptionValue::integer() const {
  auto text = plain("a whole number");
  if (!text) return text.error();
  long long value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size()) {
    return refuse("expected a whole number, got '" + *text + "'");
  }
  return value;
}

// A plain decimal number such as 0.8 (from_chars: no locale, no hex, no "nan").
OptionResult<double> YamlOptionValue::number() const {
  auto text = plain("a number");
  if (!text) return text.error();
  double value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value, std::chars_format::fixed);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size()) {
    return refuse("expected a number like 0.8, got '" + *text + "'");
  }
  return value;
}

OptionResult<std::chrono::milliseconds> YamlOptionValue::duration() const {
  auto text = this->text();
  if (!text) return text.error();
  auto parsed = parse_duration(*text);
  if (!parsed) return refuse(parsed.error().message);
  return *parsed;
}

OptionResult<std::vector<std::unique_ptr<OptionValue>>> YamlOptionValue::items(std::string_view expected) const {
  if (!node_.IsSequence()) return refuse(std::string(expected));
  std::vector<std::unique_ptr<OptionValue>> out;
  out.reserve(node_.size());
  for (const auto& item : node_) out.push_back(std::make_unique<YamlOptionValue>(item));
  return out;
}

}  // namespace memdiag
