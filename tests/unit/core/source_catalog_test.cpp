// SPDX-License-Identifier: Apache-2.0
// The catalog of this build: every registration runs on this platform, names and keys are
// unique, defaults are of the registration's own type and build a source of that name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "probes/catalog/source_catalog.hpp"

namespace memdiag {
namespace {

TEST(SourceCatalog, OneRegistrationPerSourceInSamplingOrder) {
  std::vector<std::string_view> names;
  for (const SourceRegistration& r : source_catalog()) names.push_back(r.name);
  // The order sources sample and render in: the golden expositions depend on it.
  EXPECT_EQ(names, (std::vector<std::string_view>{"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup",
                                                  "reclaim_stall", "processes", "canary"}));
}

TEST(SourceCatalog, EveryRegistrationIsWholeAndForThisPlatform) {
  for (const SourceRegistration& r : source_catalog()) {
    SCOPED_TRACE(std::string(r.name));
    EXPECT_TRUE(r.platform == Platform::kLinux || r.platform == Platform::kAny);
    std::set<std::string_view> keys(r.keys.begin(), r.keys.end());
    EXPECT_EQ(keys.size(), r.keys.size());
    EXPECT_EQ(keys.count("enabled"), 0u);  // every source has it; the loader reads it
    ASSERT_TRUE(r.read && r.check_together && r.make && r.same_options);
    EXPECT_TRUE(r.same_options(r.defaults, r.defaults));
    EXPECT_FALSE(r.check_together(r.defaults));  // the defaults are valid together
    EXPECT_EQ(find_source(r.name), &r);
  }
  EXPECT_EQ(find_source("nonexistent"), nullptr);
  EXPECT_EQ(make_source("nonexistent", KernelPaths{}), nullptr);
}

TEST(SourceCatalog, DefaultsBuildASourceOfThatName) {
  // Only the sources that start nothing when built (the canary and processes start threads
  // at their first sample, reclaim_stall loads eBPF at probe()).
  for (std::string_view name : {"meminfo", "vmstat", "pressure", "vm_sysctl", "cgroup", "reclaim_stall", "canary"}) {
    auto source = make_source(name, KernelPaths{});
    ASSERT_NE(source, nullptr) << name;
    EXPECT_EQ(source->name(), name);
  }
}

}  // namespace
}  // namespace memdiag
