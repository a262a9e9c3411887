// SPDX-License-Identifier: Apache-2.0
#include "windows/paging/pdh_paging_source.hpp"

// clang-format off
#include <windows.h>
#include <pdh.h>
#include <pdhmsg.h>
#include <winperf.h>
// clang-format on

#include <array>
#include <string>

namespace memdiag::windows {

namespace {

struct PagingCounter {
  const wchar_t* path;  // English names: PdhAddEnglishCounter works whatever the system's language
  const char* name;
  std::optional<std::uint64_t> WindowsPagingSection::*field;
};

constexpr std::array<PagingCounter, 4> kCounters = {{
    {L"\\Memory\\Page Faults/sec", "Page Faults/sec", &WindowsPagingSection::page_faults_total},
    {L"\\Memory\\Page Reads/sec", "Page Reads/sec", &WindowsPagingSection::hard_faults_total},
    {L"\\Memory\\Pages Input/sec", "Pages Input/sec", &WindowsPagingSection::pages_input_total},
    {L"\\Memory\\Pages Output/sec", "Pages Output/sec", &WindowsPagingSection::pages_output_total},
}};

class PdhPagingSource final : public Source {
 public:
  ~PdhPagingSource() override {
    if (query_ != nullptr) ::PdhCloseQuery(query_);
  }

  std::string_view name() const override { return "windows_paging"; }

  Status probe() override {
    if (query_ == nullptr) {
      if (::PdhOpenQueryW(nullptr, 0, &query_) != ERROR_SUCCESS) {
        query_ = nullptr;
        return make_error("PdhOpenQuery failed");
      }
      missing_.clear();
      for (std::size_t i = 0; i < kCounters.size(); ++i) {
        if (::PdhAddEnglishCounterW(query_, kCounters[i].path, 0, &counters_[i]) != ERROR_SUCCESS) {
          counters_[i] = nullptr;
          missing_ += std::string(missing_.empty() ? "" : ", ") + kCounters[i].name;
        }
      }
    }
    for (PDH_HCOUNTER c : counters_) {
      if (c != nullptr) return Ok{};
    }
    return make_error("PDH has none of the \\Memory paging counters (" + missing_ + ")");
  }

  Status sample(Snapshot& out) override {
    if (query_ == nullptr) return make_error("PDH query not open");
    if (::PdhCollectQueryData(query_) != ERROR_SUCCESS) return make_error("PdhCollectQueryData failed");
    WindowsPagingSection section;
    for (std::size_t i = 0; i < kCounters.size(); ++i) {
      if (counters_[i] == nullptr) continue;
      PDH_RAW_COUNTER raw{};
      DWORD type = 0;
      const bool read = ::PdhGetRawCounterValue(counters_[i], &type, &raw) == ERROR_SUCCESS;
      const bool valid = raw.CStatus == PDH_CSTATUS_VALID_DATA || raw.CStatus == PDH_CSTATUS_NEW_DATA;
      if (!read || !valid || raw.FirstValue < 0) continue;
      section.*kCounters[i].field = accumulate(i, static_cast<std::uint64_t>(raw.FirstValue), (type & PERF_SIZE_LARGE) != 0);
    }
    out.windows_paging = section;
    return Ok{};
  }

  std::string degraded() const override {
    return missing_.empty() ? std::string() : "PDH counters missing: " + missing_;
  }

 private:
  // These \Memory counters are 32 bits wide (PERF_COUNTER_COUNTER) and wrap after 2^32 events,
  // hours on a busy host; exported as counters they must only grow, so the source keeps its own
  // 64-bit total of the raw value's steps.
  std::uint64_t accumulate(std::size_t i, std::uint64_t raw, bool wide) {
    if (!seen_[i]) {
      seen_[i] = true;
      totals_[i] = raw;
    } else {
      totals_[i] += wide ? raw - last_[i] : static_cast<std::uint32_t>(raw - last_[i]);
    }
    last_[i] = raw;
    return totals_[i];
  }

  PDH_HQUERY query_ = nullptr;
  std::array<bool, kCounters.size()> seen_{};
  std::array<std::uint64_t, kCounters.size()> last_{};
  std::array<std::uint64_t, kCounters.size()> totals_{};
  std::array<PDH_HCOUNTER, kCounters.size()> counters_{};
  std::string missing_;
};

}  // namespace

SourceRegistration windows_paging_registration() {
  return register_source(SourceSpec<NoOptions>{
      .name = "windows_paging",
      .platform = Platform::kWindows,
      .make = [](const SourceContext&, const NoOptions&) -> std::unique_ptr<Source> {
        return std::make_unique<PdhPagingSource>();
      },
  });
}

}  // namespace memdiag::windows
