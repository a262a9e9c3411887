// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/metric_names.hpp"

#include <vector>

namespace memdiag::prom {
namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char to_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// Words promtool's lint reads as abbreviated units ("metric names should not contain
// abbreviated units"). Kernel names use some of them as ordinary words.
bool is_unit_abbreviation(std::string_view word) {
  static constexpr std::string_view kAbbreviations[] = {"s",  "ms", "us", "ns", "sec", "b", "kb",
                                                        "mb", "gb", "tb", "pb", "m",   "h", "d"};
  for (std::string_view a : kAbbreviations) {
    if (word == a) return true;
  }
  return false;
}

// Spells out the kernel's abbreviations that collide with unit words: SReclaimable and
// SUnreclaim are slab counters, SecPageTables / nr_sec_page_table_pages are secondary (KVM/IOMMU)
// page tables. Any other colliding word is glued to its neighbour so the lint stays clean.
std::string spell_out_unit_words(const std::string& snake) {
  std::vector<std::string> words;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = snake.find('_', start);
    std::string word = snake.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (word == "s") word = "slab";
    if (word == "sec") word = "secondary";
    if (is_unit_abbreviation(word) && !words.empty()) {
      words.back() += word;
    } else {
      words.push_back(std::move(word));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (words.size() > 1 && is_unit_abbreviation(words.front())) {  // leading unit word: glue to the next
    words[1] = words.front() + words[1];
    words.erase(words.begin());
  }
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : "_") + w;
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string snake_case(std::string_view in) {
  std::string out;
  out.reserve(in.size() + 8);
  auto separate = [&out] {
    if (!out.empty() && out.back() != '_') out += '_';
  };
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    const char prev = i > 0 ? in[i - 1] : '\0';
    const char next = i + 1 < in.size() ? in[i + 1] : '\0';
    if (is_upper(c)) {
      // A word starts at an upper-case letter after a lower-case one or a digit ("MemTotal"),
      // or at the last capital of an acronym followed by lower case ("KReclaimable").
      // A capital right after a digit is a unit letter ("DirectMap2M" -> direct_map_2m).
      if (is_lower(prev) || (is_upper(prev) && is_lower(next))) separate();
      out += to_lower(c);
    } else if (is_digit(c)) {
      if (is_lower(prev) || is_upper(prev)) separate();  // "DirectMap4k" -> direct_map_4k
      out += c;
    } else if (is_lower(c)) {
      out += c;
    } else {
      separate();  // '_', '(', ')', anything else becomes one separator
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || is_digit(out.front())) out.insert(0, "field_");
  return out;
}

std::string meminfo_metric_name(std::string_view kernel_name, FieldKind kind) {
  return "memdiag_meminfo_" + spell_out_unit_words(snake_case(kernel_name)) + (kind == FieldKind::kBytes ? "_bytes" : "_pages");
}

std::string vmstat_metric_name(std::string_view kernel_name, FieldKind kind) {
  // vmstat names are already snake case ("direct_map_level2_splits"): keep them as the kernel
  // spells them unless they carry characters a metric name cannot.
  bool already_snake = !kernel_name.empty();
  for (char c : kernel_name) already_snake = already_snake && (is_lower(c) || is_digit(c) || c == '_');
  std::string name =
      "memdiag_vmstat_" + spell_out_unit_words(already_snake ? std::string(kernel_name) : snake_case(kernel_name));
  if (kind == FieldKind::kCounter && !ends_with(name, "_total")) name += "_total";
  return name;
}

}  // namespace memdiag::prom
