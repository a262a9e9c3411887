// SPDX-License-Identifier: Apache-2.0
// The hint after "permission denied loading BPF": which of the usual causes the loader's own
// /proc/self/status points at.
#include "probes/bpf/bpf_permission_hint.hpp"

#include <gtest/gtest.h>

#include <string>

namespace memdiag {
namespace {

// Lines as the kernel writes them (6.x), with only the fields that matter here changed.
std::string status(const char* cap_eff, const char* no_new_privs, const char* seccomp) {
  return std::string("Name:\tmemdiagd\nUmask:\t0077\nState:\tR (running)\nCapInh:\t0000000000000000\n"
                     "CapPrm:\t000000c000080000\nCapEff:\t") +
         cap_eff + "\nCapBnd:\t000000c000080000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t" + no_new_privs +
         "\nSeccomp:\t" + seccomp + "\nSeccomp_filters:\t1\nSpeculation_Store_Bypass:\tthread vulnerable\n";
}

TEST(BpfPermissionFooting, ReadsTheEffectiveSetSeccompAndNoNewPrivs) {
  auto footing = parse_bpf_permission_footing(status("000000c000080000", "1", "2"));
  ASSERT_TRUE(footing.ok()) << footing.error().message;
  EXPECT_EQ(footing->effective_capabilities, 0xc000080000ULL);  // CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE
  EXPECT_EQ(footing->seccomp_mode, 2);
  EXPECT_TRUE(footing->no_new_privs);
}

TEST(BpfPermissionFooting, OlderKernelsWithoutTheSeccompAndNoNewPrivsLinesAreRead) {
  auto footing = parse_bpf_permission_footing("Name:\tx\nCapEff:\t0000003fffffffff\n");
  ASSERT_TRUE(footing.ok()) << footing.error().message;
  EXPECT_EQ(footing->effective_capabilities, 0x3fffffffffULL);
  EXPECT_EQ(footing->seccomp_mode, 0);
  EXPECT_FALSE(footing->no_new_privs);
}

TEST(BpfPermissionFooting, BadInputIsRefusedWithAReason) {
  for (const std::string& bad :
       {std::string(), std::string("Name:\tx\n"), std::string("CapEff:\t\n"), std::string("CapEff:\t00000zz0\n"),
        std::string("CapEff:\t11112222333344445\n"), std::string("CapEff:\t0\nSeccomp:\t7\n"),
        std::string("CapEff:\t0\nNoNewPrivs:\tyes\n"), std::string(1 << 16, 'x')}) {
    auto footing = parse_bpf_permission_footing(bad);
    EXPECT_FALSE(footing.ok()) << bad.substr(0, 40);
    if (!footing.ok()) {
      EXPECT_FALSE(footing.error().message.empty());
    }
  }
}

TEST(BpfPermissionHint, NamesTheCapabilitiesTheLoaderLacks) {
  EXPECT_EQ(bpf_permission_hint(*parse_bpf_permission_footing(status("0000000000080000", "0", "0"))),
            "needs CAP_BPF and CAP_PERFMON; the loader holds neither");
  EXPECT_EQ(bpf_permission_hint(*parse_bpf_permission_footing(status("0000008000080000", "0", "0"))),
            "needs CAP_BPF and CAP_PERFMON; the loader lacks CAP_PERFMON");
  EXPECT_EQ(bpf_permission_hint(*parse_bpf_permission_footing(status("0000004000000000", "0", "0"))),
            "needs CAP_BPF and CAP_PERFMON; the loader lacks CAP_BPF");
}

TEST(BpfPermissionHint, UnderNoNewPrivsSaysWhereTheCapabilitiesMustComeFrom) {
  EXPECT_EQ(bpf_permission_hint(*parse_bpf_permission_footing(status("0000000000080000", "1", "2"))),
            "needs CAP_BPF and CAP_PERFMON; the loader holds neither (no_new_privs is set: it can only inherit "
            "them from the daemon)");
}

TEST(BpfPermissionHint, WithTheCapabilitiesASeccompFilterIsNamed) {
  EXPECT_EQ(bpf_permission_hint(*parse_bpf_permission_footing(status("000000c000080000", "1", "2"))),
            "the loader holds CAP_BPF and CAP_PERFMON but runs under a seccomp filter, which likely refused bpf(): "
            "allow the call (systemd: SystemCallFilter=bpf)");
}

TEST(BpfPermissionHint, CapSysAdminStandsInForBoth) {
  const std::string hint = bpf_permission_hint(*parse_bpf_permission_footing(status("0000000000200000", "0", "0")));
  EXPECT_EQ(hint, "the loader holds CAP_BPF and CAP_PERFMON and no seccomp filter applies: a security module "
                  "(lockdown, SELinux, AppArmor) likely refused the call");
}

TEST(BpfPermissionHint, ThisProcessGetsAHint) {
  // Whatever this test runs with, the hint is one of the three kinds above.
  const std::string hint = bpf_permission_hint();
  EXPECT_TRUE(hint.rfind("needs CAP_BPF and CAP_PERFMON", 0) == 0 || hint.rfind("the loader holds", 0) == 0) << hint;
}

}  // namespace
}  // namespace memdiag
