// SPDX-License-Identifier: Apache-2.0
// The pure parts of the daemon's footing: its capability names and sets, the locked-memory
// figure and the kernel release test. The capset/mlockall calls
// themselves are exercised on the real daemon (tests/e2e/test_hardening.py).
#include <gtest/gtest.h>

#include "daemon/privileges/capabilities.hpp"
#include "daemon/privileges/least_privilege.hpp"
#include "daemon/privileges/memory_lock.hpp"

namespace memdiag::privileges {
namespace {

TEST(Capabilities, NamesKnownAndUnknownNumbers) {
  EXPECT_EQ(capability_name(kCapSysPtrace), "cap_sys_ptrace");
  EXPECT_EQ(capability_name(kCapBpf), "cap_bpf");
  EXPECT_EQ(capability_name(kCapPerfmon), "cap_perfmon");
  EXPECT_EQ(capability_name(0), "cap_chown");
  EXPECT_EQ(capability_name(40), "cap_checkpoint_restore");
  EXPECT_EQ(capability_name(41), "cap_41");
  EXPECT_EQ(capability_names(capability_bit(kCapBpf) | capability_bit(kCapSysPtrace)),
            (std::vector<std::string>{"cap_sys_ptrace", "cap_bpf"}));
  EXPECT_TRUE(capability_names(0).empty());
}

TEST(Capabilities, TheDaemonKeepsLessThanItsLoader) {
  EXPECT_EQ(own_capabilities(false, false), capability_bit(kCapSysPtrace));
  EXPECT_EQ(own_capabilities(true, false), capability_bit(kCapSysPtrace) | capability_bit(kCapIpcLock));
  EXPECT_TRUE(own_capabilities(false, true) & capability_bit(kCapBpf));  // before 6.5: maps need it
  const CapabilityMask loader = loader_capabilities();
  EXPECT_TRUE(loader & capability_bit(kCapBpf));
  EXPECT_TRUE(loader & capability_bit(kCapPerfmon));
  EXPECT_FALSE(loader & capability_bit(kCapSysAdmin));  // the task iterator loads without it
  EXPECT_FALSE(own_capabilities(false, false) & loader);
  EXPECT_EQ(own_capabilities(false, false, true), capability_bit(kCapSysPtrace) | capability_bit(kCapNetBindService));
}

TEST(Capabilities, APortBelow1024NeedsToBindAsPrivileged) {
  EXPECT_TRUE(binds_privileged_port("0.0.0.0:443"));
  EXPECT_TRUE(binds_privileged_port("[::1]:80"));
  EXPECT_TRUE(binds_privileged_port(":1023"));
  EXPECT_FALSE(binds_privileged_port(":1024"));
  EXPECT_FALSE(binds_privileged_port("127.0.0.1:9717"));
  EXPECT_FALSE(binds_privileged_port("localhost"));
  EXPECT_FALSE(binds_privileged_port("host:http"));
}

TEST(Capabilities, CurrentSetsAreReadable) {
  auto sets = current_capabilities();
  ASSERT_TRUE(sets) << sets.error().message;
  EXPECT_EQ(sets->effective & ~sets->permitted, 0u);  // effective is always within permitted
}

TEST(MemoryLock, LockedFigureOfSmapsRollup) {
  const std::string text =
      "55d0c0a00000-7ffd5e3f7000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:               12345 kB\n"
      "Locked:             4096 kB\n";
  EXPECT_EQ(parse_locked_bytes(text), std::optional<std::uint64_t>(4096ull << 10));
  EXPECT_EQ(parse_locked_bytes("Rss: 1 kB\nLocked:    0 kB\n"), std::optional<std::uint64_t>(0));
  EXPECT_FALSE(parse_locked_bytes(""));
  EXPECT_FALSE(parse_locked_bytes("Rss: 1 kB\n"));
  EXPECT_FALSE(parse_locked_bytes("x\nLocked: \n"));
  EXPECT_FALSE(parse_locked_bytes("x\nLocked: 12"));          // truncated before the unit
  EXPECT_FALSE(parse_locked_bytes("x\nLocked: 12 MB\n"));     // not the kernel's unit
  EXPECT_FALSE(parse_locked_bytes("x\nLocked: 99999999999999999999999 kB\n"));
  EXPECT_FALSE(parse_locked_bytes("x\nLocked: 18014398509481984 kB\n"));  // bytes overflow 64 bits
}

TEST(MemoryLock, ThisProcessHasALockedFigure) {
  EXPECT_TRUE(locked_resident_bytes());
}

TEST(LeastPrivilege, KernelReleases) {
  EXPECT_TRUE(kernel_allows_bpf_use_without_capability("6.18.0-1-amd64"));
  EXPECT_TRUE(kernel_allows_bpf_use_without_capability("6.5.0"));
  EXPECT_TRUE(kernel_allows_bpf_use_without_capability("7.0"));
  EXPECT_FALSE(kernel_allows_bpf_use_without_capability("6.4.16"));
  EXPECT_FALSE(kernel_allows_bpf_use_without_capability("5.15.0-91-generic"));
  EXPECT_FALSE(kernel_allows_bpf_use_without_capability(""));
  EXPECT_FALSE(kernel_allows_bpf_use_without_capability("six.five"));
  EXPECT_FALSE(kernel_allows_bpf_use_without_capability("6"));
}

}  // namespace
}  // namespace memdiag::privileges
