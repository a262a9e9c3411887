// SPDX-License-Identifier: Apache-2.0
// A Source owns one kernel interface. probe() says once whether it can work here; sample()
// fills its section of a Snapshot or returns why it could not. A failing source never stops
// the others: the sampler records its status and moves on.
#pragma once

#include <string>
#include <string_view>

#include "probes/core/expected.hpp"
#include "probes/core/snapshot.hpp"

namespace memdiag {

class Source {
 public:
  virtual ~Source() = default;

  virtual std::string_view name() const = 0;

  // Whether this kernel offers the interface at all (for example no PSI before 4.20).
  virtual Status probe() = 0;

  // Reads and parses; on success writes this source's section into `out`.
  virtual Status sample(Snapshot& out) = 0;

  // After a successful sample: what was partly wrong (a file that did not parse among many,
  // a fallback taken), for the log; empty when nothing was. The section says how much.
  virtual std::string degraded() const { return {}; }
};

}  // namespace memdiag
