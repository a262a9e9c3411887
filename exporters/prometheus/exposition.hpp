// Prometheus text exposition (format 0.0.4) of a Collectable: the body of /metrics and of
// `memdiagd --once`, produced by one function so the two can never differ.
#pragma once

#include <string>

#include <prometheus/collectable.h>

namespace memdiag::prom {

inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string render_exposition(const prometheus::Collectable& collectable);

}  // namespace memdiag::prom
