// Where the collector's rendering goes. One rendering routine feeds either prometheus-cpp's
// MetricFamily objects (the Collectable interface) or the text exposition directly: the text
// path is what /metrics serves, because building ~300 MetricFamily objects and running them
// through prometheus-cpp's iostream serializer costs ~25x more than writing the text once.
// A unit test holds the two paths to the same samples.
#pragma once

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

class MetricSink {
 public:
  virtual ~MetricSink() = default;
  // Starts a family; the samples that follow belong to it.
  virtual void family(std::string_view name, std::string_view help, prometheus::MetricType type) = 0;
  virtual void sample(const LabelView* labels, std::size_t count, double value) = 0;

  void sample(std::initializer_list<LabelView> labels, double value) { sample(labels.begin(), labels.size(), value); }
};

// Builds prometheus-cpp MetricFamily objects (counter or gauge values).
class FamilySink final : public MetricSink {
 public:
  void family(std::string_view name, std::string_view help, prometheus::MetricType type) override;
  using MetricSink::sample;
  void sample(const LabelView* labels, std::size_t count, double value) override;
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

 private:
  std::string& out_;
  std::string_view current_name_;
};

// Text-format number: shortest round-trip form, +Inf/-Inf/NaN spelled as Prometheus does.
void append_value(std::string& out, double value);

}  // namespace memdiag::prom
