#include "daemon/sources.hpp"


#include "probes/canary/canary_source.hpp"
#include "probes/linux/process_source.hpp"

#ifdef MEMDIAG_HAVE_BPF
#include "probes/bpf/bpf_process_scanner.hpp"
#include "probes/bpf/reclaim_stall_source.hpp"
#endif

namespace memdiag {
namespace {

constexpr std::string_view kReclaimStall = "reclaim_stall";
constexpr std::string_view kProcesses = "processes";

BpfScannerOpener bpf_process_scanner([[maybe_unused]] const std::string& btf_path) {
#ifdef MEMDIAG_HAVE_BPF
  return [btf_path](const std::optional<MemoryHierarchy>& hierarchy) {
    return BpfProcessScanner::open(btf_path, hierarchy);
  };
#else
  return {};
#endif
}

#ifndef MEMDIAG_HAVE_BPF
class BuiltWithoutBpf final : public Source {
 public:
  std::string_view name() const override { return kReclaimStall; }
  Status probe() override { return make_error("this memdiagd was built without eBPF (cmake -DMEMDIAG_BPF=OFF)"); }
  Status sample(Snapshot&) override { return probe(); }
};
#endif

}  // namespace

std::unique_ptr<Source> make_source(std::string_view name, const KernelPaths& paths, const SourceOptions& options) {
  if (name == "canary") return canary::make_canary_source(paths, options);
  if (name == kProcesses) {
    return std::make_unique<ProcessSource>(paths, options, bpf_process_scanner(options.btf_path),
                                           own_pid_in(paths.procfs));
  }
  if (name != kReclaimStall) return make_linux_source(name, paths, options);
#ifdef MEMDIAG_HAVE_BPF
  return make_reclaim_stall_source(paths, options);
#else
  return std::make_unique<BuiltWithoutBpf>();
#endif
}

}  // namespace memdiag
