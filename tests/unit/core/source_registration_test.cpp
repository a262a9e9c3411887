// SPDX-License-Identifier: Apache-2.0
// A source as one registration: the typed spec erased into a SourceRegistration keeps its keys,
// reads each key into its own options type, checks keys together, compares and builds.
#include <gtest/gtest.h>

#include <string>

#include "probes/core/source_registration.hpp"

namespace memdiag {
namespace {

struct ToyOptions {
  long long depth = 3;
  std::string label = "x";
  bool operator==(const ToyOptions&) const = default;
};

class ToySource final : public Source {
 public:
  explicit ToySource(ToyOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "toy"; }
  Status probe() override { return Ok{}; }
  Status sample(Snapshot&) override { return Ok{}; }
  ToyOptions options_;
};

// An OptionValue holding one integer written on line 7.
class IntegerValue final : public OptionValue {
 public:
  explicit IntegerValue(long long v) : v_(v) {}
  OptionResult<bool> boolean() const override { return refuse("not a boolean"); }
  OptionResult<long long> integer() const override { return v_; }
  OptionResult<double> number() const override { return static_cast<double>(v_); }
  OptionResult<std::string> text() const override { return std::to_string(v_); }
  OptionResult<std::chrono::milliseconds> duration() const override { return refuse("not a duration"); }
  OptionResult<std::vector<std::unique_ptr<OptionValue>>> items(std::string_view expected) const override {
    return refuse(std::string(expected));
  }
  OptionError refuse(std::string reason) const override { return OptionError{std::move(reason), 7}; }

 private:
  long long v_;
};

SourceRegistration toy_registration() {
  return register_source(SourceSpec<ToyOptions>{
      .name = "toy",
      .platform = Platform::kAny,
      .keys = {{"depth",
                [](const OptionValue& value, ToyOptions& options) -> OptionStatus {
                  auto depth = integer_between(value, 0, 32);
                  if (!depth) return depth.error();
                  options.depth = *depth;
                  return Ok{};
                }}},
      .check_together = [](const ToyOptions& o) -> std::optional<KeyRefusal> {
        if (o.depth == 13) return KeyRefusal{"depth", "unlucky"};
        return std::nullopt;
      },
      .make = [](const SourceContext&, const ToyOptions& o) -> std::unique_ptr<Source> {
        return std::make_unique<ToySource>(o);
      },
  });
}

TEST(SourceRegistration, ReadsKeysIntoItsOwnOptionsType) {
  const SourceRegistration r = toy_registration();
  EXPECT_EQ(r.name, "toy");
  EXPECT_EQ(r.keys, (std::vector<std::string_view>{"depth"}));
  std::any options = r.defaults;
  ASSERT_TRUE(r.read("depth", IntegerValue(5), options));
  EXPECT_EQ(std::any_cast<const ToyOptions&>(options).depth, 5);
  EXPECT_FALSE(r.same_options(options, r.defaults));
  EXPECT_TRUE(r.same_options(r.defaults, r.defaults));
  auto source = r.make(SourceContext{}, options);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(static_cast<ToySource&>(*source).options_.depth, 5);
}

TEST(SourceRegistration, RefusalsCarryTheValuesLineAndTheStandardWords) {
  const SourceRegistration r = toy_registration();
  std::any options = r.defaults;
  auto refused = r.read("depth", IntegerValue(40), options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason, "must be between 0 and 32, got 40");
  EXPECT_EQ(refused.error().line, 7);
  EXPECT_EQ(std::any_cast<const ToyOptions&>(options).depth, 3);  // unchanged
}

TEST(SourceRegistration, KeysTogetherAreCheckedAfterwards) {
  const SourceRegistration r = toy_registration();
  std::any options = r.defaults;
  EXPECT_FALSE(r.check_together(options));
  ASSERT_TRUE(r.read("depth", IntegerValue(13), options));
  auto refusal = r.check_together(options);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->key, "depth");
  EXPECT_EQ(refusal->reason, "unlucky");
}

}  // namespace
}  // namespace memdiag
