// SPDX-License-Identifier: Apache-2.0
// The number and line scanners every Linux parser is built on.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "probes/linux/text_scan.hpp"

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

}  // namespace
}  // namespace memdiag
