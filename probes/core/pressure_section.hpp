// SPDX-License-Identifier: Apache-2.0
// Pressure stall information (PSI) as a snapshot holds it: for the node (/proc/pressure/*) and,
// in the cgroup section, per cgroup (memory.pressure). Linux has PSI since 4.20; other systems
// leave these sections absent.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace memdiag {

// One line of a PSI file ("some" or "full").
struct PsiLine {
  double avg10 = 0;   // ratio 0..1 (the kernel prints percent)
  double avg60 = 0;
  double avg300 = 0;
  std::uint64_t total_us = 0;  // cumulative stall time in microseconds

  bool operator==(const PsiLine&) const = default;
};

struct PsiResource {
  PsiLine some;
  std::optional<PsiLine> full;  // absent for cpu before Linux 5.13

  bool operator==(const PsiResource&) const = default;
};

enum class PsiResourceKind : std::uint8_t { kMemory = 0, kIo = 1, kCpu = 2 };
inline constexpr std::array<std::string_view, 3> kPsiResourceNames = {"memory", "io", "cpu"};

struct PressureSection {
  // Indexed by PsiResourceKind; a resource is absent if its file is.
  std::array<std::optional<PsiResource>, 3> resources;

  bool operator==(const PressureSection&) const = default;
};

}  // namespace memdiag
