// SPDX-License-Identifier: Apache-2.0
// A Google Benchmark reporter shared by the bench binaries: shows every run as usual and keeps
// each benchmark's CPU time per iteration and counters (the median when repetitions are asked
// for) so a binary can print its summary against its targets.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace memdiag::bench {

class RecordingReporter final : public benchmark::BenchmarkReporter {
 public:
  struct Figures {
    double cpu_us = -1;
    std::map<std::string, double> counters;
  };

  explicit RecordingReporter(benchmark::BenchmarkReporter* display) : display_(display) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!single && !median) continue;
      Figures& f = figures_[run.run_name.function_name];
      f.cpu_us = run.GetAdjustedCPUTime() * to_us(run.time_unit);
      for (const auto& [name, counter] : run.counters) f.counters[name] = counter.value;
    }
    display_->ReportRuns(runs);
  }
  void Finalize() override { display_->Finalize(); }

  // CPU microseconds per iteration, or a negative value if that benchmark did not run.
  double cpu_us(const std::string& name) const {
    auto it = figures_.find(name);
    return it == figures_.end() ? -1 : it->second.cpu_us;
  }
  double counter(const std::string& name, const std::string& counter) const {
    auto it = figures_.find(name);
    if (it == figures_.end()) return -1;
    auto c = it->second.counters.find(counter);
    return c == it->second.counters.end() ? -1 : c->second;
  }

 private:
  static double to_us(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond: return 1e-3;
      case benchmark::kMicrosecond: return 1;
      case benchmark::kMillisecond: return 1e3;
      case benchmark::kSecond: return 1e6;
    }
    return 1;
  }

  benchmark::BenchmarkReporter* display_;
  std::map<std::string, Figures> figures_;
};

}  // namespace memdiag::bench
