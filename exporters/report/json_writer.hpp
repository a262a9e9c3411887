// SPDX-License-Identifier: Apache-2.0
// A small streaming JSON writer for the diagnosis report: objects, arrays, strings (escaped as
// RFC 8259 requires, invalid UTF-8 replaced), numbers (finite ones; NaN and infinities, which
// JSON cannot spell, become null) and booleans. Commas are placed by the writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memdiag::report {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // Inside an object: the key of the value that follows.
  void key(std::string_view name);

  void string(std::string_view value);
  void number(double value);
  void integer(std::uint64_t value);
  void boolean(bool value);
  void null();

  // Shorthands inside an object; absent optionals write nothing.
  void field(std::string_view name, std::string_view value) { key(name), string(value); }
  void field(std::string_view name, const char* value) { key(name), string(value); }
  void field(std::string_view name, double value) { key(name), number(value); }
  void field(std::string_view name, std::uint64_t value) { key(name), integer(value); }
  void field(std::string_view name, bool value) { key(name), boolean(value); }
  void field(std::string_view name, const std::optional<double>& value) {
    if (value) field(name, *value);
  }
  void field(std::string_view name, const std::optional<std::uint64_t>& value) {
    if (value) field(name, *value);
  }

 private:
  void separate();  // a comma before every value but the first of its container
  void quoted(std::string_view text);  // "text", escaped
  std::string& out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace memdiag::report
