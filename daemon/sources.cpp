#include "daemon/sources.hpp"

#ifdef MEMDIAG_HAVE_BPF
#include "probes/bpf/reclaim_stall_source.hpp"
#endif

namespace memdiag {
namespace {

constexpr std::string_view kReclaimStall = "reclaim_stall";

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
  if (name != kReclaimStall) return make_linux_source(name, paths, options);
#ifdef MEMDIAG_HAVE_BPF
  return make_reclaim_stall_source(paths, options);
#else
  return std::make_unique<BuiltWithoutBpf>();
#endif
}

}  // namespace memdiag
