// The Prometheus view of the latest snapshot. Collect() only renders what the sampler already
// published: a scrape never reads the kernel, so its cost is rendering cost and a slow /proc
// never blocks Prometheus.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

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

  std::vector<prometheus::MetricFamily> Collect() const override;

  // Renders one snapshot (also used by --once, which has no store loop).
  std::vector<prometheus::MetricFamily> render(const Snapshot* snapshot) const;

 private:
  // Metric names and help texts derived from a FieldSchema, computed once per schema.
  struct RenderedSchema {
    std::shared_ptr<const FieldSchema> schema;
    std::vector<std::string> names;  // empty string: field skipped (name collision)
    std::vector<std::string> helps;
  };
  enum class Table { kMeminfo, kVmstat };

  std::shared_ptr<const RenderedSchema> rendered(Table table, const std::shared_ptr<const FieldSchema>& schema) const;
  void render_table(Table table, const FieldTable& fields, std::vector<prometheus::MetricFamily>& out) const;

  const SnapshotStore& store_;
  BuildInfo build_;
  mutable std::mutex cache_mutex_;
  mutable std::shared_ptr<const RenderedSchema> meminfo_cache_;
  mutable std::shared_ptr<const RenderedSchema> vmstat_cache_;
};

}  // namespace memdiag::prom
