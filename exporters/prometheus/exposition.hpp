// SPDX-License-Identifier: Apache-2.0
// Prometheus text exposition (format 0.0.4) of any prometheus-cpp Collectable, through
// prometheus-cpp's own TextSerializer. /metrics and --once use SnapshotCollector::render_text
// (the same rendering, written straight to text, ~9x cheaper); this is the reference that path
// is tested against, and the way to serve other Collectables.
#pragma once

#include <string>

#include <prometheus/collectable.h>

namespace memdiag::prom {

inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string render_exposition(const prometheus::Collectable& collectable);

}  // namespace memdiag::prom
