// SPDX-License-Identifier: Apache-2.0
// The Prometheus view of the latest snapshot. Rendering only reads what the sampler already
// published: a scrape never touches the kernel, so its cost is rendering cost and a slow /proc
// never blocks Prometheus. The same routine feeds prometheus-cpp (Collect) and the text that
// /metrics serves (render_text).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "exporters/prometheus/daemon_posture.hpp"
#include "exporters/prometheus/metric_sink.hpp"
#include "probes/core/snapshot_store.hpp"

namespace memdiag::prom {

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string compiler;
};

class SnapshotCollector final : public prometheus::Collectable {
 public:
  SnapshotCollector(const SnapshotStore& store, BuildInfo build);

  // prometheus-cpp interface, for embedding in a prometheus::Exposer or a Registry.
  std::vector<prometheus::MetricFamily> Collect() const override;

  // The text exposition of the latest snapshot, appended to `out`: what /metrics serves.
  void render_text(std::string& out) const;

  // The text exposition of the latest snapshot, rendered once per snapshot and shared: every
  // scrape until the next sample gets the same immutable buffer, so clients that ask for
  // /metrics and read slowly (or never) hold one copy between them, not one each.
  std::shared_ptr<const std::string> shared_text() const;

  // What the daemon runs with, from now on (memdiag_daemon_*); none rendered until set.
  void set_posture(std::shared_ptr<const DaemonPosture> posture);

  // Renders one snapshot (nullptr: before the first sample) into any sink.
  void render(const Snapshot* snapshot, MetricSink& sink) const;

 private:
  // Metric names and help texts derived from a FieldSchema, computed once per schema.
  struct RenderedSchema {
    std::shared_ptr<const FieldSchema> schema;
    std::vector<std::string> names;  // empty string: field skipped (name collision)
    std::vector<std::string> helps;
  };
  enum class Table { kMeminfo, kVmstat };

  std::shared_ptr<const RenderedSchema> rendered(Table table, const std::shared_ptr<const FieldSchema>& schema) const;
  void render_table(Table table, const FieldTable& fields, MetricSink& sink) const;

  void render_posture(MetricSink& sink) const;

  const SnapshotStore& store_;
  BuildInfo build_;
  mutable std::mutex posture_mutex_;
  std::shared_ptr<const DaemonPosture> posture_;
  mutable std::mutex cache_mutex_;
  mutable std::shared_ptr<const RenderedSchema> meminfo_cache_;
  mutable std::shared_ptr<const RenderedSchema> vmstat_cache_;
  mutable std::atomic<std::size_t> last_text_size_{0};  // reserve hint for the next render
  mutable std::mutex text_mutex_;
  mutable SnapshotPtr text_of_;                     // the snapshot text_ was rendered from
  mutable std::shared_ptr<const std::string> text_;  // null until the first shared_text()
};

}  // namespace memdiag::prom
