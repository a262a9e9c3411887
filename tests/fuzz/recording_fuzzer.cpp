// SPDX-License-Identifier: Apache-2.0
// Recordings (`memdiagd diagnose --replay FILE`) on arbitrary bytes, as a damaged or hostile
// file would give them. Whatever decodes encodes back to a recording that decodes to the same
// header and snapshots, and re-encodes to the same bytes; and the models and the report run over
// it as a replay would, which must not crash or overflow on numbers no kernel would give.
#include <string>
#include <vector>

#include "exporters/report/diagnosis_report.hpp"
#include "probes/analysis/diagnosis_replay.hpp"
#include "probes/recording/recording_reader.hpp"
#include "probes/recording/recording_writer.hpp"
#include "probes/recording/snapshot_fields.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace memdiag;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  auto decoded = recording::decode_recording(std::string(fuzz::as_text(data, size)));
  if (!decoded) {
    FUZZ_CHECK(!decoded.error().message.empty());
    return 0;
  }
  std::vector<const Snapshot*> snapshots;
  for (const auto& s : decoded->snapshots) snapshots.push_back(s.get());
  const std::string again = recording::encode_recording(decoded->header, snapshots);
  auto redecoded = recording::decode_recording(again);
  FUZZ_CHECK(redecoded.ok());
  FUZZ_CHECK(redecoded->header == decoded->header);
  FUZZ_CHECK(redecoded->snapshots.size() == decoded->snapshots.size());
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    FUZZ_CHECK(recording::same_recorded_fields(*redecoded->snapshots[i], *snapshots[i]));
  }
  std::vector<const Snapshot*> resnapshots;
  for (const auto& s : redecoded->snapshots) resnapshots.push_back(s.get());
  FUZZ_CHECK(recording::encode_recording(redecoded->header, resnapshots) == again);

  analysis::DiagnosisReplay replay({}, 300);
  for (auto& s : decoded->snapshots) replay.add(s);
  if (const SnapshotPtr latest = replay.latest()) {
    FUZZ_CHECK(!report::render_diagnosis_json(*latest, {}).empty());
    FUZZ_CHECK(!report::render_diagnosis_text(*latest, {}).empty());
  }
  return 0;
}
