// SPDX-License-Identifier: Apache-2.0
// The BPF loader child (probes/bpf/bpf_loader_child.hpp) and its message: the message decoder
// refuses every truncation, a count that does not match the descriptors, trailing bytes and
// oversized fields; a descriptor made in the child works in the parent after the child has
// exited; a failing, crashing or hanging child is an error saying which; and what the child
// allocates never shows in the parent's peak. No root needed: the child here makes pipes, not
// BPF objects (the probes' own tests load the real ones).
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "probes/bpf/bpf_handoff_message.hpp"
#include "probes/bpf/bpf_loader_child.hpp"

namespace memdiag {
namespace {

using namespace std::chrono_literals;

BpfHandoffMessage sample_message() {
  BpfHandoffMessage m;
  m.names = {"map:stall_hist", "prog:direct_begin", "link"};
  m.report = std::string("\x01\x00\x00\x00 binary report", 18);
  m.log = {"libbpf: line one", "libbpf: line two"};
  return m;
}

TEST(BpfHandoffMessage, RoundTrips) {
  const BpfHandoffMessage m = sample_message();
  auto decoded = decode_handoff(encode_handoff(m), 3);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, m);

  BpfHandoffMessage failed;
  failed.error = "permission denied loading BPF";
  failed.log = {"libbpf: why"};
  auto decoded_failure = decode_handoff(encode_handoff(failed), 0);
  ASSERT_TRUE(decoded_failure.ok()) << decoded_failure.error().message;
  EXPECT_EQ(*decoded_failure, failed);
}

TEST(BpfHandoffMessage, EveryTruncationAndTrailingBytesAreRefused) {
  const std::string bytes = encode_handoff(sample_message());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_handoff(bytes.substr(0, n), 3).ok()) << "accepted the first " << n << " bytes";
  }
  EXPECT_FALSE(decode_handoff(bytes + "x", 3).ok());
  EXPECT_FALSE(decode_handoff("", 0).ok());
  EXPECT_FALSE(decode_handoff("garbage that is not a message", 0).ok());
}

TEST(BpfHandoffMessage, DescriptorsMustMatchTheNames) {
  const std::string bytes = encode_handoff(sample_message());
  EXPECT_FALSE(decode_handoff(bytes, 2).ok());
  EXPECT_FALSE(decode_handoff(bytes, 4).ok());
  // An error never comes with descriptors.
  BpfHandoffMessage both = sample_message();
  both.error = "failed";
  EXPECT_FALSE(decode_handoff(encode_handoff(both), 3).ok());
}

TEST(BpfHandoffMessage, AHugeLengthIsRefusedWithoutReadingIt) {
  std::string bytes = "MDBH";
  WireWriter w;
  w.u32(0xffffffffu);  // the error's length
  bytes += w.bytes();
  auto decoded = decode_handoff(bytes, 0);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message.find("4294967295 bytes"), std::string::npos) << decoded.error().message;
}

TEST(BpfHandoffMessage, AnAnswerTooBigBecomesAnErrorSayingSo) {
  BpfHandoffMessage m;
  m.names = {"map:x"};
  m.report = std::string(kHandoffMaxBytes, 'r');
  auto decoded = decode_handoff(encode_handoff(m), 0);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_NE(decoded->error.find("does not fit one message"), std::string::npos) << decoded->error;
}

// The parent's peak RSS from now on: writing 5 to clear_refs resets VmHWM to the current RSS.
long reset_and_read_hwm_kib(bool reset) {
  if (reset) std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

TEST(BpfLoaderChild, ADescriptorMadeInTheChildWorksAfterItExited) {
  auto received = load_in_forked_child([] {
    BpfHandoff out;
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) {
      out.error = "pipe failed";
      return out;
    }
    // Written by the child, read by the parent after the child has gone.
    if (::write(pipe_fds[1], "from the child", 14) != 14) out.error = "write failed";
    ::close(pipe_fds[1]);
    out.descriptors.emplace_back("pipe:read", pipe_fds[0]);
    out.report = "report";
    out.log = {"a line"};
    return out;
  });
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_EQ(received->report, "report");
  EXPECT_EQ(received->log, std::vector<std::string>{"a line"});
  EXPECT_GT(received->child_peak_rss_kib, 0);
  EXPECT_FALSE(received->take("no such name"));
  UniqueFd fd = received->take("pipe:read");
  ASSERT_TRUE(fd);
  char buffer[32] = {};
  ASSERT_EQ(::read(fd.get(), buffer, sizeof(buffer)), 14);
  EXPECT_STREQ(buffer, "from the child");
  EXPECT_EQ(::read(fd.get(), buffer, sizeof(buffer)), 0);  // the child's write end is closed: it exited
  EXPECT_FALSE(received->take("pipe:read")) << "taken twice";
}

TEST(BpfLoaderChild, AFailedLoadComesBackWithItsLog) {
  auto received = load_in_forked_child([] {
    BpfHandoff out;
    out.error = "permission denied loading BPF (needs CAP_BPF and CAP_PERFMON)";
    out.log = {"libbpf: prog 'x': failed to load"};
    out.descriptors.emplace_back("ignored", 0);  // an error sends none
    return out;
  });
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().message, "permission denied loading BPF (needs CAP_BPF and CAP_PERFMON)");
  EXPECT_EQ(received.error().log, std::vector<std::string>{"libbpf: prog 'x': failed to load"});
}

TEST(BpfLoaderChild, AChildThatDiesIsNamedByItsSignal) {
  auto received = load_in_forked_child([]() -> BpfHandoff {
    ::raise(SIGKILL);
    return {};
  });
  ASSERT_FALSE(received.ok());
  EXPECT_NE(received.error().message.find("killed by signal 9 before answering"), std::string::npos)
      << received.error().message;
}

TEST(BpfLoaderChild, AChildPastItsDeadlineIsKilled) {
  const auto started = std::chrono::steady_clock::now();
  auto received = load_in_forked_child(
      []() -> BpfHandoff {
        std::this_thread::sleep_for(60s);
        return {};
      },
      200ms);
  ASSERT_FALSE(received.ok());
  EXPECT_NE(received.error().message.find("did not answer within 200 ms (killed)"), std::string::npos)
      << received.error().message;
  // Killed, not waited out (a generous bound: the point is that it is not 60 s).
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
}

TEST(BpfLoaderChild, WhatTheChildAllocatesIsNotInTheParentsPeak) {
  constexpr std::size_t kChildBytes = 64u << 20;
  const long before = reset_and_read_hwm_kib(true);
  ASSERT_GT(before, 0);
  auto received = load_in_forked_child([] {
    BpfHandoff out;
    void* mapped = ::mmap(nullptr, kChildBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
      out.error = "mmap failed";
      return out;
    }
    // Touched through a volatile pointer, so no compiler elides it: resident in the child.
    volatile char* block = static_cast<char*>(mapped);
    for (std::size_t i = 0; i < kChildBytes; i += 4096) block[i] = 1;
    out.report = std::to_string(block[kChildBytes / 2]);
    return out;
  });
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_EQ(received->report, "1");
  const long after = reset_and_read_hwm_kib(false);
  EXPECT_GE(received->child_peak_rss_kib, static_cast<long>(kChildBytes / 1024));
  EXPECT_LT(after - before, 4 * 1024) << "the parent's peak rose by " << (after - before) << " KiB";
}

}  // namespace
}  // namespace memdiag
