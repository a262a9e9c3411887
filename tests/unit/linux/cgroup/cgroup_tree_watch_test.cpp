// SPDX-License-Identifier: Apache-2.0
// CgroupTreeWatch (walk again only when the tree changed), CgroupIdMap (ids to paths on top of
// it) and CgroupFileCache (kept-open descriptors of cgroup files): on a scratch directory, and on a real cgroup v1 memory
// hierarchy, where it matters that kernfs notifies mkdir/rmdir and that a removed cgroup's
// kept descriptor fails with ENODEV.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "probes/linux/cgroup/cgroup_file_cache.hpp"
#include "probes/linux/cgroup/cgroup_id_map.hpp"
#include "probes/linux/cgroup/cgroup_tree_watch.hpp"
#include "probes/linux/cgroup/oomd_marks.hpp"

namespace memdiag {
namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/memdiag-treewatch-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> paths_of(const std::vector<DiscoveredCgroup>& list) {
  std::vector<std::string> out;
  for (const auto& d : list) out.push_back(d.path + (d.leaf ? "" : "+"));
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

TEST(CgroupTreeWatch, WalksOnlyWhenADirectoryIsCreatedRemovedOrRenamed) {
  ScratchDir root;
  fs::create_directories(root.path() + "/a/b");
  CgroupTreeWatch tree;
  CgroupDiscoveryOptions options;
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)), (std::vector<std::string>{"/+", "/a+", "/a/b"}));
  EXPECT_EQ(tree.walks(), 1u);
  ASSERT_EQ(tree.unwatched_reason(), "");

  // Nothing changed: the same list without listing a directory; a file written is no change.
  write_file(root.path() + "/a/memory.current", "1\n");
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 3u);
  EXPECT_EQ(tree.walks(), 1u);

  fs::create_directory(root.path() + "/a/b/c");  // below a leaf: b stops being one
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)),
            (std::vector<std::string>{"/+", "/a+", "/a/b+", "/a/b/c"}));
  EXPECT_EQ(tree.walks(), 2u);

  fs::rename(root.path() + "/a/b", root.path() + "/a/renamed");
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)),
            (std::vector<std::string>{"/+", "/a+", "/a/renamed+", "/a/renamed/c"}));
  EXPECT_EQ(tree.walks(), 3u);

  fs::remove(root.path() + "/a/renamed/c");
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)), (std::vector<std::string>{"/+", "/a+", "/a/renamed"}));
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 3u);
  EXPECT_EQ(tree.walks(), 4u);

  // A directory removed and created again under the same name is watched again.
  fs::remove(root.path() + "/a/renamed");
  fs::create_directory(root.path() + "/a/renamed");
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 3u);
  fs::create_directory(root.path() + "/a/renamed/again");
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)),
            (std::vector<std::string>{"/+", "/a+", "/a/renamed+", "/a/renamed/again"}));
}

TEST(CgroupTreeWatch, OptionsOrRootChangedWalkAgain) {
  ScratchDir root;
  fs::create_directories(root.path() + "/x/y");
  CgroupTreeWatch tree;
  CgroupDiscoveryOptions options;
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 3u);
  options.max_depth = 1;
  EXPECT_EQ(paths_of(tree.cgroups(root.path(), options)), (std::vector<std::string>{"/+", "/x+"}));
  EXPECT_EQ(tree.walks(), 2u);
  // Beyond max_depth a new directory still changes whether /x/y is a leaf: watched too.
  ScratchDir other;
  EXPECT_EQ(paths_of(tree.cgroups(other.path(), options)), (std::vector<std::string>{"/"}));
  EXPECT_EQ(tree.walks(), 3u);
}

TEST(CgroupTreeWatch, DirectoryCreatedRightAfterItsParentIsFound) {
  // The watch on a new directory is added when the walk lists it; a child made between the
  // parent's event and that walk is listed by the walk itself.
  ScratchDir root;
  CgroupTreeWatch tree;
  CgroupDiscoveryOptions options;
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 1u);
  fs::create_directories(root.path() + "/p/q/r");
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 4u);
  fs::create_directory(root.path() + "/p/q/r/s");
  EXPECT_EQ(tree.cgroups(root.path(), options).size(), 5u);
}

TEST(CgroupFileCache, KeepsDescriptorsReadsFreshContentAndClosesUnusedEntries) {
  ScratchDir dir;
  write_file(dir.path() + "/memory.current", "123\n");
  CgroupFileCache cache(100);
  auto& e = cache.entry("/a");
  ASSERT_EQ(cache.read(e, CgroupFile::kUsage, dir.path(), "memory.current"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.content(), "123\n");
  EXPECT_EQ(cache.open_files(), 1u);
  // Rewritten in place (as the kernel regenerates it): the kept descriptor reads the new text.
  write_file(dir.path() + "/memory.current", "4567\n");
  ASSERT_EQ(cache.read(e, CgroupFile::kUsage, dir.path(), "memory.current"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.content(), "4567\n");
  EXPECT_EQ(cache.open_files(), 1u);
  // Larger than the first buffer: read whole.
  const std::string big(10000, 'x');
  write_file(dir.path() + "/memory.stat", big);
  ASSERT_EQ(cache.read(e, CgroupFile::kStat, dir.path(), "memory.stat"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.content(), big);
  EXPECT_EQ(cache.open_files(), 2u);

  cache.end_sample();  // "/a" was used in this sample: kept
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.open_files(), 2u);
  cache.end_sample();  // not used in this one: closed
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.open_files(), 0u);
}

TEST(CgroupFileCache, MissingFilesAreRememberedAndRetriedLater) {
  ScratchDir dir;
  CgroupFileCache cache(100);
  const std::string name = "memory.memsw.usage_in_bytes";
  ASSERT_EQ(cache.read(cache.entry("/a"), CgroupFile::kMemswUsage, dir.path(), name.c_str()),
            CgroupFileCache::Result::kMissing);
  write_file(dir.path() + "/" + name, "9\n");
  // Looked for again within kMissingRetrySamples samples (all entries at once), not at once.
  std::uint32_t samples = 0;
  for (;; ++samples) {
    cache.end_sample();
    auto r = cache.read(cache.entry("/a"), CgroupFile::kMemswUsage, dir.path(), name.c_str());
    if (r == CgroupFileCache::Result::kOk) break;
    ASSERT_EQ(r, CgroupFileCache::Result::kMissing);
    ASSERT_LT(samples, CgroupFileCache::kMissingRetrySamples);
  }
  EXPECT_GE(samples, 1u);
  EXPECT_EQ(cache.content(), "9\n");
}

TEST(CgroupFileCache, OverTheDescriptorBudgetFilesAreReadAndClosed) {
  ScratchDir dir;
  write_file(dir.path() + "/memory.current", "1\n");
  write_file(dir.path() + "/memory.max", "max\n");
  CgroupFileCache cache(1);
  auto& e = cache.entry("/a");
  ASSERT_EQ(cache.read(e, CgroupFile::kUsage, dir.path(), "memory.current"), CgroupFileCache::Result::kOk);
  ASSERT_EQ(cache.read(e, CgroupFile::kLimit, dir.path(), "memory.max"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.content(), "max\n");
  EXPECT_EQ(cache.open_files(), 1u);
  // A directory where a file is expected: an error naming the path, not "missing".
  fs::create_directory(dir.path() + "/memory.stat");
  ASSERT_EQ(cache.read(e, CgroupFile::kStat, dir.path(), "memory.stat"), CgroupFileCache::Result::kFailed);
  EXPECT_NE(cache.error().find(dir.path() + "/memory.stat"), std::string::npos) << cache.error();
}

std::uint64_t inode_of(const std::string& path) {
  struct stat st{};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(CgroupIdMap, NamesIdsFollowsRenamesAndMarksRemovals) {
  ScratchDir root;
  fs::create_directories(root.path() + "/a/b");
  CgroupIdMap ids;
  const auto t0 = std::chrono::steady_clock::now();
  ids.update(root.path(), t0);
  const std::uint64_t a = inode_of(root.path() + "/a"), b = inode_of(root.path() + "/a/b");
  ASSERT_NE(ids.find(a), nullptr);
  EXPECT_EQ(ids.find(a)->path, "/a");
  EXPECT_EQ(ids.find(b)->path, "/a/b");
  EXPECT_EQ(ids.find(inode_of(root.path()))->path, "/");
  EXPECT_EQ(ids.find(1234567), nullptr);
  EXPECT_EQ(ids.walks(), 1u);

  ids.update(root.path(), t0);  // nothing changed: no walk, no stat
  EXPECT_EQ(ids.walks(), 1u);

  fs::rename(root.path() + "/a/b", root.path() + "/a/c");
  ids.update(root.path(), t0);
  EXPECT_EQ(ids.find(b)->path, "/a/c");  // same directory, same id, new name
  EXPECT_FALSE(ids.find(b)->removed());

  fs::remove(root.path() + "/a/c");
  const auto t1 = t0 + std::chrono::seconds(5);
  ids.update(root.path(), t1);
  ASSERT_NE(ids.find(b), nullptr);  // kept, with its name, until forgotten
  EXPECT_TRUE(ids.find(b)->removed());
  EXPECT_EQ(ids.find(b)->removed_at, t1);
  ids.forget_removed_unless([](std::uint64_t) { return false; });
  EXPECT_EQ(ids.find(b), nullptr);
  EXPECT_NE(ids.find(a), nullptr);  // present ones are never forgotten that way
}

// --- On a real cgroup v1 memory hierarchy (this machine's; CI's). ---

class RealV1Cgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
    if (::access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) != 0) {
      GTEST_SKIP() << "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory";
    }
    root_ = "/sys/fs/cgroup/memory/memdiag-unit-treewatch-" + std::to_string(::getpid());
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0) << root_;
  }
  void TearDown() override {
    if (root_.empty()) return;
    ::rmdir((root_ + "/child/grandchild").c_str());
    ::rmdir((root_ + "/child").c_str());
    ::rmdir(root_.c_str());
  }
  std::string root_;
};

TEST_F(RealV1Cgroup, KernfsNotifiesCgroupCreationAndRemoval) {
  CgroupTreeWatch tree;
  CgroupDiscoveryOptions options;
  EXPECT_EQ(tree.cgroups(root_, options).size(), 1u);
  EXPECT_EQ(tree.cgroups(root_, options).size(), 1u);
  EXPECT_EQ(tree.walks(), 1u);
  ASSERT_EQ(::mkdir((root_ + "/child").c_str(), 0755), 0);
  EXPECT_EQ(paths_of(tree.cgroups(root_, options)), (std::vector<std::string>{"/+", "/child"}));
  EXPECT_EQ(tree.walks(), 2u);
  // Writing a control file is no tree change.
  write_file(root_ + "/child/memory.limit_in_bytes", "67108864");
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  EXPECT_EQ(tree.walks(), 2u);
  ASSERT_EQ(::mkdir((root_ + "/child/grandchild").c_str(), 0755), 0);
  EXPECT_EQ(tree.cgroups(root_, options).size(), 3u);
  ASSERT_EQ(::rmdir((root_ + "/child/grandchild").c_str()), 0);
  EXPECT_EQ(paths_of(tree.cgroups(root_, options)), (std::vector<std::string>{"/+", "/child"}));
  EXPECT_EQ(tree.walks(), 4u);
}

// Userspace OOM killers' marks: v1 cgroupfs takes user.* and trusted.* attributes (as root),
// setting one is an IN_ATTRIB on the cgroup's directory, not a change of the tree, and the
// marks read back as the kills they count.
TEST_F(RealV1Cgroup, OomdMarksAreReadAndTheirChangeIsSeenWithoutAWalk) {
  ASSERT_EQ(::mkdir((root_ + "/child").c_str(), 0755), 0);
  const std::string child = root_ + "/child";
  CgroupTreeWatch tree;
  CgroupDiscoveryOptions options;
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  const std::uint64_t walks = tree.walks();
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  EXPECT_FALSE(tree.attributes_may_have_changed(child, walks));
  CgroupSample none;
  read_oomd_marks(child, none);
  EXPECT_FALSE(none.oomd_user_kills);
  EXPECT_FALSE(none.oomd_trusted_kills);

  ASSERT_EQ(::setxattr(child.c_str(), "user.oomd_ooms", "1", 1, 0), 0) << std::strerror(errno);
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  EXPECT_EQ(tree.walks(), walks) << "an attribute is no tree change";
  EXPECT_TRUE(tree.attributes_may_have_changed(child, walks));
  EXPECT_FALSE(tree.attributes_may_have_changed(root_, walks));
  CgroupSample marks;
  read_oomd_marks(child, marks);
  EXPECT_EQ(marks.oomd_user_kills, 1u);  // a kill begun: the action counts until oomd_kill is written

  ASSERT_EQ(::setxattr(child.c_str(), "user.oomd_kill", "3", 1, 0), 0);
  ASSERT_EQ(::setxattr(child.c_str(), "trusted.oomd_kill", "2\n", 2, 0), 0);
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  EXPECT_TRUE(tree.attributes_may_have_changed(child, walks));
  read_oomd_marks(child, marks);
  EXPECT_EQ(marks.oomd_user_kills, 3u);  // the processes killed
  EXPECT_EQ(marks.oomd_trusted_kills, 2u);
  EXPECT_EQ(tree.cgroups(root_, options).size(), 2u);
  EXPECT_FALSE(tree.attributes_may_have_changed(child, walks)) << "only since the last call";
}

TEST(OomdMarks, ParsesTheCountsBothKillersWrite) {
  EXPECT_EQ(parse_oomd_mark("12"), 12u);
  EXPECT_EQ(parse_oomd_mark(std::string_view("7\0", 2)), 7u);
  EXPECT_EQ(parse_oomd_mark("7\n"), 7u);
  EXPECT_FALSE(parse_oomd_mark(""));
  EXPECT_FALSE(parse_oomd_mark("-1"));
  EXPECT_FALSE(parse_oomd_mark("1x"));
  EXPECT_FALSE(parse_oomd_mark("99999999999999999999"));
}

TEST_F(RealV1Cgroup, KeptDescriptorOfARemovedCgroupSaysGone) {
  ASSERT_EQ(::mkdir((root_ + "/child").c_str(), 0755), 0);
  write_file(root_ + "/child/memory.limit_in_bytes", "67108864");
  CgroupFileCache cache(100);
  auto& e = cache.entry("/child");
  const std::string dir = root_ + "/child";
  ASSERT_EQ(cache.read(e, CgroupFile::kLimit, dir, "memory.limit_in_bytes"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.content(), "67108864\n");
  ASSERT_EQ(cache.read(e, CgroupFile::kLimit, dir, "memory.limit_in_bytes"), CgroupFileCache::Result::kOk);
  EXPECT_EQ(cache.open_files(), 1u);
  ASSERT_EQ(::rmdir(dir.c_str()), 0);
  EXPECT_EQ(cache.read(e, CgroupFile::kLimit, dir, "memory.limit_in_bytes"), CgroupFileCache::Result::kGone);
  EXPECT_EQ(cache.open_files(), 0u);  // closed at once: a removed cgroup pins nothing
  EXPECT_EQ(cache.read(e, CgroupFile::kLimit, dir, "memory.limit_in_bytes"), CgroupFileCache::Result::kMissing);
}

}  // namespace
}  // namespace memdiag
