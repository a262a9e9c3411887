// Reads one memory cgroup's files into a CgroupSample, for either hierarchy version. A file
// that is missing is a field left absent (the root cgroup has no memory.current; v1 without
// swap accounting has no memsw files; the cgroup may be removed while we read it); a file that
// does not parse is counted and left absent too, so one bad file never hides the others.
#pragma once

#include <string>
#include <vector>

#include "probes/core/cgroup_section.hpp"
#include "probes/linux/flat_keyed_parser.hpp"

namespace memdiag {

enum class CgroupVersion { kV1, kV2 };

class CgroupReader {
 public:
  struct Outcome {
    bool vanished = false;            // the directory is gone: drop the cgroup
    std::size_t malformed_files = 0;  // files present but unparsable
    std::string first_error;          // the first of them, for the log
  };

  // What ranking and the limit sum need, read for every discovered cgroup: usage, hard limit
  // and memory.pressure. `dir`: the cgroup's directory; `psi_dir`: where its memory.pressure
  // lives ("" = in `dir` for v2; the cgroup2 twin in hybrid mode, which may not exist).
  Outcome read_core(CgroupVersion version, const std::string& dir, const std::string& psi_dir, CgroupSample& out);

  // The rest (events, memory.stat, swap, v1 failcnt and oom_control, v2 high/low), read only
  // for the cgroups the cap keeps: at 2,000 cgroups and a cap of 500 that halves the opens,
  // which are most of the cost.
  void read_details(CgroupVersion version, const std::string& dir, CgroupSample& out, Outcome& outcome);

 private:
  // Reads `dir/name`; false if missing or (counted in `outcome`) unreadable.
  bool read_file(const std::string& dir, const char* name, Outcome& outcome);
  void read_number(const std::string& dir, const char* name, std::optional<std::uint64_t>& field, Outcome& outcome);
  // nullopt in `field` (and false in `limited`) for "max" and v1's unlimited.
  void read_limit(const std::string& dir, const char* name, std::optional<std::uint64_t>& field, bool* limited,
                  Outcome& outcome);
  void read_v1(const std::string& dir, CgroupSample& out, Outcome& outcome, bool details);
  void read_v2(const std::string& dir, CgroupSample& out, Outcome& outcome, bool details);
  void read_v1_core(const std::string& dir, CgroupSample& out, Outcome& o) { read_v1(dir, out, o, false); }
  void read_v1_details(const std::string& dir, CgroupSample& out, Outcome& o) { read_v1(dir, out, o, true); }
  void read_v2_core(const std::string& dir, CgroupSample& out, Outcome& o) { read_v2(dir, out, o, false); }
  void read_v2_details(const std::string& dir, CgroupSample& out, Outcome& o) { read_v2(dir, out, o, true); }
  void read_stat(const std::string& dir, CgroupVersion version, CgroupSample& out, Outcome& outcome);
  void read_pressure(const std::string& dir, CgroupSample& out, Outcome& outcome);
  void note_malformed(Outcome& outcome, const std::string& dir, const char* name, const std::string& why);

  std::string path_;  // reused path buffer
  std::string buffer_;
  std::string_view content_;
  std::vector<KeyedValue> keyed_;
};

}  // namespace memdiag
