// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/node/vmstat_parser.hpp"

#include <array>

namespace memdiag {

bool vmstat_field_is_counter(std::string_view name) {
  // nr_* fields are levels except these cumulative ones (mm/vmstat.c vmstat_text).
  static constexpr std::array<std::string_view, 11> kCumulativeNr = {
      "nr_dirtied",           "nr_written",
      "nr_throttled_written", "nr_vmscan_write",
      "nr_vmscan_immediate_reclaim",
      "nr_foll_pin_acquired", "nr_foll_pin_released",
      "nr_tlb_remote_flush",  "nr_tlb_remote_flush_received",
      "nr_tlb_local_flush_all", "nr_tlb_local_flush_one",
  };
  if (name.size() > 3 && name[0] == 'n' && name[1] == 'r' && name[2] == '_') {
    for (std::string_view c : kCumulativeNr) {
      if (name == c) return true;
    }
    return false;
  }
  // Non-nr_ levels: the shadow-entry node count is a level, not an event.
  return name != "workingset_nodes";
}

}  // namespace memdiag
