// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/metric_sink.hpp"

#include <charconv>
#include <cmath>

#include "probes/core/utf8_text.hpp"

namespace memdiag::prom {

using prometheus::MetricType;

namespace {

// Label values reach Prometheus as valid UTF-8 whatever their source (see utf8_text.hpp).
std::string label_value(std::string_view value) { return utf8::to_valid(value); }

}  // namespace

void FamilySink::family(std::string_view name, std::string_view help, MetricType type) {
  auto& f = families_.emplace_back();
  f.name = std::string(name);
  f.help = std::string(help);
  f.type = type;
}

void FamilySink::sample(const LabelView* labels, std::size_t count, double value) {
  auto& family = families_.back();
  auto& metric = family.metric.emplace_back();
  metric.label.reserve(count);
  for (std::size_t i = 0; i < count; ++i) metric.label.push_back({std::string(labels[i].name), label_value(labels[i].value)});
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
}

void FamilySink::histogram(const LabelView* labels, std::size_t count, const HistogramView& h) {
  auto& metric = families_.back().metric.emplace_back();
  metric.label.reserve(count);
  for (std::size_t i = 0; i < count; ++i) metric.label.push_back({std::string(labels[i].name), label_value(labels[i].value)});
  metric.histogram.sample_count = h.count;
  metric.histogram.sample_sum = h.sum;
  metric.histogram.bucket.reserve(h.buckets);
  for (std::size_t i = 0; i < h.buckets; ++i) metric.histogram.bucket.push_back({h.cumulative[i], h.bounds[i]});
}

namespace {

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Histogram: return "histogram";
    case MetricType::Summary: return "summary";
    default: return "untyped";
  }
}

// HELP text escapes backslash and newline; label values also escape the double quote.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  // Almost nothing needs escaping: check with a plain loop (find_first_of runs a memchr per
  // character), then copy the whole text at once.
  bool plain = true;
  bool ascii = true;
  for (char c : text) {
    plain = plain && c != '\\' && c != '\n' && !(quote && c == '"');
    ascii = ascii && (static_cast<unsigned char>(c) & 0x80) == 0;
  }
  if (plain && ascii) {
    out += text;
    return;
  }
  // Label values (quote) that are not valid UTF-8 would make Prometheus refuse the scrape.
  std::string valid;
  if (quote && !ascii) {
    valid = utf8::to_valid(text);
    text = valid;
  }
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

void append_value(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, ec == std::errc() ? end : buffer);
  }
}

void TextSink::family(std::string_view name, std::string_view help, MetricType type) {
  current_name_ = name;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_escaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name(type);
  out_ += '\n';
}

void TextSink::head(std::string_view suffix, const LabelView* labels, std::size_t count, const LabelView* extra) {
  out_ += current_name_;
  out_ += suffix;
  char separator = '{';
  for (std::size_t i = 0; i < count + (extra ? 1 : 0); ++i) {
    const LabelView& l = i < count ? labels[i] : *extra;
    out_ += separator;
    out_ += l.name;
    out_ += "=\"";
    append_escaped(out_, l.value, true);
    out_ += '"';
    separator = ',';
  }
  if (separator == ',') out_ += '}';
  out_ += ' ';
}

void TextSink::sample(const LabelView* labels, std::size_t count, double value) {
  head({}, labels, count, nullptr);
  append_value(out_, value);
  out_ += '\n';
}

void TextSink::histogram(const LabelView* labels, std::size_t count, const HistogramView& h) {
  // prometheus-cpp's order (count, sum, buckets), so both renderings stay line-for-line equal.
  head("_count", labels, count, nullptr);
  append_value(out_, static_cast<double>(h.count));
  out_ += '\n';
  head("_sum", labels, count, nullptr);
  append_value(out_, h.sum);
  out_ += '\n';
  std::string bound;
  for (std::size_t i = 0; i <= h.buckets; ++i) {
    bound.clear();
    if (i < h.buckets) {
      append_value(bound, h.bounds[i]);
    } else {
      bound = "+Inf";
    }
    const LabelView le{"le", bound};
    head("_bucket", labels, count, &le);
    append_value(out_, static_cast<double>(i < h.buckets ? h.cumulative[i] : h.count));
    out_ += '\n';
  }
}

}  // namespace memdiag::prom
