// SPDX-License-Identifier: Apache-2.0
// Where the collector's rendering goes. One rendering routine feeds either prometheus-cpp's
// MetricFamily objects (the Collectable interface) or the text exposition directly: the text
// path is what /metrics serves, because building ~300 MetricFamily objects and running them
// through prometheus-cpp's iostream serializer costs ~25x more than writing the text once.
// A unit test holds the two paths to the same samples.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace memdiag::prom {

struct LabelView {
  std::string_view name;
  std::string_view value;
};

// One histogram sample: cumulative counts at finite upper bounds (ascending), the +Inf
// bucket being `count`.
struct HistogramView {
  const double* bounds;
  const std::uint64_t* cumulative;
  std::size_t buckets;
  std::uint64_t count;
  double sum;
};

class MetricSink {
 public:
  virtual ~MetricSink() = default;
  // Starts a family; the samples that follow belong to it.
  virtual void family(std::string_view name, std::string_view help, prometheus::MetricType type) = 0;
  virtual void sample(const LabelView* labels, std::size_t count, double value) = 0;
  // In a Histogram family: _count, _sum and the _bucket series of one label set.
  virtual void histogram(const LabelView* labels, std::size_t count, const HistogramView& h) = 0;

  void sample(std::initializer_list<LabelView> labels, double value) { sample(labels.begin(), labels.size(), value); }
};

// Builds prometheus-cpp MetricFamily objects (counter or gauge values).
class FamilySink final : public MetricSink {
 public:
  void family(std::string_view name, std::string_view help, prometheus::MetricType type) override;
  using MetricSink::sample;
  void sample(const LabelView* labels, std::size_t count, double value) override;
  void histogram(const LabelView* labels, std::size_t count, const HistogramView& h) override;
  std::vector<prometheus::MetricFamily> take() { return std::move(families_); }

 private:
  std::vector<prometheus::MetricFamily> families_;
};

// Appends the Prometheus text format 0.0.4 to a string.
class TextSink final : public MetricSink {
 public:
  explicit TextSink(std::string& out) : out_(out) {}
  void family(std::string_view name, std::string_view help, prometheus::MetricType type) override;
  using MetricSink::sample;
  void sample(const LabelView* labels, std::size_t count, double value) override;
  void histogram(const LabelView* labels, std::size_t count, const HistogramView& h) override;

 private:
  // name{labels[,extra="value"]} and a space.
  void head(std::string_view suffix, const LabelView* labels, std::size_t count, const LabelView* extra);
  std::string& out_;
  std::string_view current_name_;
};

// Text-format number: shortest round-trip form, +Inf/-Inf/NaN spelled as Prometheus does.
void append_value(std::string& out, double value);

}  // namespace memdiag::prom
