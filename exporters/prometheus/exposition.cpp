// SPDX-License-Identifier: Apache-2.0
#include "exporters/prometheus/exposition.hpp"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace memdiag::prom {

std::string render_exposition(const prometheus::Collectable& collectable) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, collectable.Collect());
  return std::move(out).str();
}

}  // namespace memdiag::prom
