// SPDX-License-Identifier: Apache-2.0
// The eBPF factories of a build without eBPF (cmake -DMEMDIAG_BPF=OFF): see bpf_factories.hpp.
#include "probes/bpf/bpf_factories.hpp"

namespace memdiag {
namespace {

class BuiltWithoutBpf final : public Source {
 public:
  std::string_view name() const override { return "reclaim_stall"; }
  Status probe() override { return make_error("this memdiagd was built without eBPF (cmake -DMEMDIAG_BPF=OFF)"); }
  Status sample(Snapshot&) override { return probe(); }
};

}  // namespace

std::unique_ptr<Source> make_reclaim_stall_source(const KernelPaths&, const ReclaimStallOptions&) {
  return std::make_unique<BuiltWithoutBpf>();
}

BpfScannerOpener task_iterator_opener(const std::string&) { return {}; }

void set_bpf_loader_program(std::string) {}
int run_bpf_loader(const std::vector<std::string>&) { return 2; }

}  // namespace memdiag
