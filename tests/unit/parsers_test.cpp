// Parser tests on strings: well-formed input of several kernels, and everything a broken or
// hostile file can hold (truncation, garbage, empties, duplicates, 64-bit overflow).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "probes/linux/meminfo_parser.hpp"
#include "probes/linux/pressure_parser.hpp"
#include "probes/linux/text_scan.hpp"
#include "probes/linux/vmstat_parser.hpp"

namespace memdiag {
namespace {

TEST(ParseU64, AcceptsFullRangeAndRejectsOverflow) {
  EXPECT_EQ(*text::parse_u64("0"), 0u);
  EXPECT_EQ(*text::parse_u64("18446744073709551615"), 18446744073709551615ull);
  auto over = text::parse_u64("18446744073709551616");
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("overflows 64 bits"), std::string::npos);
  EXPECT_FALSE(text::parse_u64("99999999999999999999999"));
  EXPECT_FALSE(text::parse_u64(""));
  EXPECT_FALSE(text::parse_u64("-1"));
  EXPECT_FALSE(text::parse_u64("12a"));
  EXPECT_FALSE(text::parse_u64(" 1"));
}

TEST(ParseI64, SignedLimits) {
  EXPECT_EQ(*text::parse_i64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(*text::parse_i64("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(text::parse_i64("9223372036854775808"));
  EXPECT_FALSE(text::parse_i64("-9223372036854775809"));
  EXPECT_FALSE(text::parse_i64("-"));
}

TEST(ParseDecimal, KernelSpellingOnly) {
  EXPECT_DOUBLE_EQ(*text::parse_decimal("12.34"), 12.34);
  EXPECT_FALSE(text::parse_decimal("1e5"));
  EXPECT_FALSE(text::parse_decimal("nan"));
  EXPECT_FALSE(text::parse_decimal("inf"));
  EXPECT_FALSE(text::parse_decimal("1.2.3"));
  EXPECT_FALSE(text::parse_decimal(""));
}

// Every line the visitor saw, as "number:text", or the error.
std::string visited(std::string_view text, text::LineLimit limit = {100, "too many"}) {
  std::string seen;
  auto st = text::for_each_line(text, limit, [&seen](const text::Line& line) -> Status {
    if (line.text == "bad") return line.error("refused");
    seen += std::to_string(line.number) + ":" + std::string(line.text) + ";";
    return Ok{};
  });
  return st ? seen : "error: " + st.error().message;
}

TEST(ForEachLine, NumbersLinesCountingBlankOnesButSkipsThem) {
  EXPECT_EQ(visited("a\n\n \t\r\nb c\n"), "1:a;4:b c;");
  EXPECT_EQ(visited(""), "");  // what an empty file means is the caller's to say
  EXPECT_EQ(visited("\n\n"), "");
}

TEST(ForEachLine, RefusesTextWithoutFinalNewlineBeforeVisiting) {
  EXPECT_EQ(visited("a\nb"), "error: truncated: the last line has no newline: 'b'");
}

TEST(ForEachLine, StopsAtTheFirstRefusedLine) {
  EXPECT_EQ(visited("a\nbad\nc\n"), "error: line 2: refused in 'bad'");
}

TEST(ForEachLine, LimitCountsNonBlankLinesAndNamesTheFirstBeyond) {
  EXPECT_EQ(visited("a\n\nb\n", {2, "too many"}), "1:a;3:b;");
  EXPECT_EQ(visited("a\n\nb\n\nc\n", {2, "too many"}), "error: line 5: too many in 'c'");
  // Checked before the line is visited, so even a line the visitor would refuse is "too many".
  EXPECT_EQ(visited("a\nbad\n", {1, "too many"}), "error: line 2: too many in 'bad'");
}

TEST(ForEachLine, WithoutLimitVisitsEveryLine) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "x\n";
  std::size_t count = 0;
  ASSERT_TRUE(text::for_each_line(text, [&count](const text::Line&) -> Status {
    ++count;
    return Ok{};
  }));
  EXPECT_EQ(count, 2000u);
}

TEST(Meminfo, ParsesKilobytesAndCounts) {
  std::vector<MeminfoEntry> out;
  const std::string text =
      "MemTotal:       24683656 kB\n"
      "Active(anon):       1540 kB\n"
      "Committed_AS:    2000000 kB\n"
      "HugePages_Total:       4\n"
      "Hugepagesize:       2048 kB\n";
  ASSERT_TRUE(parse_meminfo(text, out));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].name, "MemTotal");
  EXPECT_EQ(out[0].value, 24683656ull * 1024);
  EXPECT_TRUE(out[0].in_bytes);
  EXPECT_EQ(out[1].name, "Active(anon)");
  EXPECT_EQ(out[3].name, "HugePages_Total");
  EXPECT_EQ(out[3].value, 4u);
  EXPECT_FALSE(out[3].in_bytes);
}

TEST(Meminfo, UnknownFieldsOfNewKernelsAreKept) {
  std::vector<MeminfoEntry> out;
  ASSERT_TRUE(parse_meminfo("MemTotal: 1 kB\nSomethingNew2030:  7 kB\n", out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].name, "SomethingNew2030");
  EXPECT_EQ(out[1].value, 7u * 1024);
}

TEST(Meminfo, RefusesBrokenInput) {
  std::vector<MeminfoEntry> out;
  EXPECT_FALSE(parse_meminfo("", out));
  EXPECT_FALSE(parse_meminfo("\n\n", out));
  EXPECT_FALSE(parse_meminfo("MemTot\n", out));                    // truncated before the colon
  EXPECT_FALSE(parse_meminfo("MemTotal:\n", out));                 // truncated before the value
  EXPECT_FALSE(parse_meminfo("MemTotal:  12 MB\n", out));        // unit we do not know
  EXPECT_FALSE(parse_meminfo("MemTotal:  12 kB extra\n", out));  // trailing text
  EXPECT_FALSE(parse_meminfo("Mem Total:  12 kB\n", out));       // space in name
  EXPECT_FALSE(parse_meminfo("\x01\x02\xff garbage\n", out));
  EXPECT_FALSE(parse_meminfo(":12 kB\n", out));
  EXPECT_FALSE(parse_meminfo("((: 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("Active(anon: 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("Active(an)on): 1 kB\n", out));
  EXPECT_FALSE(parse_meminfo("MemTotal:       8000000 kB", out));  // cut before the newline
  EXPECT_FALSE(parse_meminfo("MemTotal: 18446744073709551616 kB\n", out));  // > 2^64
  EXPECT_FALSE(parse_meminfo("MemTotal: 18014398509481984 kB\n", out));     // 2^54 kB overflows bytes
}

TEST(Meminfo, DuplicateFieldIsAnErrorNamingTheLine) {
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo("MemTotal: 1 kB\nMemFree: 2 kB\nMemTotal: 3 kB\n", out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("line 3"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("duplicate"), std::string::npos);
}

TEST(Meminfo, HugeInputWithTooManyFieldsIsRefused) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "Field" + std::to_string(i) + ": 1 kB\n";
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo(text, out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("more fields"), std::string::npos);
}

TEST(Meminfo, ErrorExcerptIsPrintableAndShort) {
  std::vector<MeminfoEntry> out;
  auto st = parse_meminfo(std::string("Mem\x01\x02Total: 1 kB ") + std::string(500, 'x') + "\n", out);
  ASSERT_FALSE(st);
  for (char c : st.error().message) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
  EXPECT_LT(st.error().message.size(), 200u);
}

TEST(Vmstat, ParsesFieldsInOrder) {
  std::vector<VmstatEntry> out;
  ASSERT_TRUE(parse_vmstat("nr_free_pages 1107300\npgscan_direct 12\nallocstall_normal 3\n", out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].name, "pgscan_direct");
  EXPECT_EQ(out[1].value, 12u);
}

TEST(Vmstat, MissingFinalNewlineIsTruncation) {
  // "oom_kill 2345" cut to "oom_kill 2" must not be reported as 2.
  std::vector<VmstatEntry> out;
  auto st = parse_vmstat("nr_free_pages 1\noom_kill 2", out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("truncated"), std::string::npos);
}

TEST(Vmstat, RefusesBrokenInput) {
  std::vector<VmstatEntry> out;
  EXPECT_FALSE(parse_vmstat("", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1\npgscan_kswa", out));    // truncated mid-line
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1\npgscan_kswa\n", out));  // a name without a value
  EXPECT_FALSE(parse_vmstat("nr_free_pages\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 1 2\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages -1\n", out));
  EXPECT_FALSE(parse_vmstat("nr_free_pages 99999999999999999999\n", out));
  EXPECT_FALSE(parse_vmstat("nr-free 1\n", out));
  EXPECT_FALSE(parse_vmstat("oom_kill 1\noom_kill 2\n", out));
}

TEST(Vmstat, CountersAndLevels) {
  EXPECT_TRUE(vmstat_field_is_counter("pgscan_direct"));
  EXPECT_TRUE(vmstat_field_is_counter("allocstall_normal"));
  EXPECT_TRUE(vmstat_field_is_counter("workingset_refault_file"));
  EXPECT_TRUE(vmstat_field_is_counter("oom_kill"));
  EXPECT_TRUE(vmstat_field_is_counter("nr_dirtied"));   // cumulative despite nr_
  EXPECT_TRUE(vmstat_field_is_counter("nr_vmscan_write"));
  EXPECT_FALSE(vmstat_field_is_counter("nr_free_pages"));
  EXPECT_FALSE(vmstat_field_is_counter("nr_dirty_threshold"));
  EXPECT_FALSE(vmstat_field_is_counter("workingset_nodes"));
}

TEST(Pressure, BothLines) {
  auto psi = parse_pressure(
      "some avg10=1.61 avg60=5.27 avg300=5.22 total=27140957\n"
      "full avg10=0.50 avg60=0.00 avg300=100.00 total=12\n");
  ASSERT_TRUE(psi) << psi.error().message;
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.0161);
  EXPECT_DOUBLE_EQ(psi->some.avg60, 0.0527);
  EXPECT_EQ(psi->some.total_us, 27140957u);
  ASSERT_TRUE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->full->avg300, 1.0);
  EXPECT_EQ(psi->full->total_us, 12u);
}

TEST(Pressure, UnknownKeysOfLaterKernelsAreIgnored) {
  auto psi = parse_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=5 avg1=3.00\n");
  ASSERT_TRUE(psi) << psi.error().message;
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.01);
}

TEST(Pressure, CpuWithoutFullLineBefore513) {
  auto psi = parse_pressure("some avg10=45.00 avg60=40.00 avg300=30.00 total=99887766\n");
  ASSERT_TRUE(psi);
  EXPECT_FALSE(psi->full.has_value());
  EXPECT_DOUBLE_EQ(psi->some.avg10, 0.45);
}

TEST(Pressure, RefusesBrokenInput) {
  EXPECT_FALSE(parse_pressure(""));
  EXPECT_FALSE(parse_pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));  // no some
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00\n"));          // truncated
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 tot\n"));
  EXPECT_FALSE(parse_pressure("some avg10=abc avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0"));  // no newline
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0 =1\n"));
  EXPECT_FALSE(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                              "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
  EXPECT_FALSE(parse_pressure("most avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
}

}  // namespace
}  // namespace memdiag
