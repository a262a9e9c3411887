#include "exporters/prometheus/metric_sink.hpp"

#include <charconv>
#include <cmath>

namespace memdiag::prom {

using prometheus::MetricType;

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
  for (std::size_t i = 0; i < count; ++i) metric.label.push_back({std::string(labels[i].name), std::string(labels[i].value)});
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
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
  for (char c : text) plain = plain && c != '\\' && c != '\n' && !(quote && c == '"');
  if (plain) {
    out += text;
    return;
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

void TextSink::sample(const LabelView* labels, std::size_t count, double value) {
  out_ += current_name_;
  if (count > 0) {
    char separator = '{';
    for (std::size_t i = 0; i < count; ++i) {
      const LabelView& l = labels[i];
      out_ += separator;
      out_ += l.name;
      out_ += "=\"";
      append_escaped(out_, l.value, true);
      out_ += '"';
      separator = ',';
    }
    out_ += '}';
  }
  out_ += ' ';
  append_value(out_, value);
  out_ += '\n';
}

}  // namespace memdiag::prom
