// SPDX-License-Identifier: Apache-2.0
// The labels every per-cgroup series carries: the path and, where the path says so, the
// Kubernetes pod, QoS class and container, or the systemd unit, so series of different
// families join on them.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>

#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/cgroup_section.hpp"

namespace memdiag::prom {

// The labels of one cgroup, plus room for the family's own (event, key, kind, window).
class CgroupLabels {
 public:
  explicit CgroupLabels(const CgroupSample& c) {
    add("cgroup", c.path);
    add_if("pod_uid", c.identity.pod_uid);
    add_if("qos_class", c.identity.qos_class);
    add_if("container_id", c.identity.container_id);
    add_if("unit", c.identity.unit);
    base_ = count_;
  }
  // One sample with this cgroup's labels followed by `extra`.
  void emit(MetricSink& sink, std::initializer_list<LabelView> extra, double value) {
    count_ = base_;
    for (const auto& l : extra) labels_[count_++] = l;
    sink.sample(labels_.data(), count_, value);
  }

 private:
  void add(std::string_view name, std::string_view value) { labels_[count_++] = {name, value}; }
  void add_if(std::string_view name, std::string_view value) {
    if (!value.empty()) add(name, value);
  }
  std::array<LabelView, 8> labels_{};
  std::size_t count_ = 0;
  std::size_t base_ = 0;
};

}  // namespace memdiag::prom
