// SPDX-License-Identifier: Apache-2.0
// The cgroup discovery and value parsers on strings: mount tables of the layouts memdiag meets
// (hybrid as on the build machines, pure v2, pure v1, a container's view, escaped paths) and
// the single-value files, plus everything a broken or hostile file can hold.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "probes/linux/cgroup/cgroup_values.hpp"
#include "probes/linux/cgroup/mountinfo_parser.hpp"

namespace memdiag {
namespace {

// `cat /proc/self/mountinfo` on a build machine (Debian 12, kernel 6.18): cgroup v1 memory
// and a cgroup2 hierarchy without the memory controller.
const char* const kHybridMountinfo =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "23 27 0:22 / /sys rw,relatime - sysfs sysfs rw\n"
    "24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334432k,nr_inodes=3083608,mode=755\n"
    "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n"
    "26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n"
    "28 27 0:25 / /mnt/sandboxing/model_tools_env/v1/python ro,nosuid,nodev,relatime - tmpfs "
    "model_tools_unavailable ro,size=4k,mode=755\n"
    "29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000\n"
    "30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683656k\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

// A systemd host booted with the unified hierarchy only (Fedora, Ubuntu 22.04+, Debian 12),
// with the propagation tags a real host shows.
const char* const kPureV2Mountinfo =
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
    "23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
    "27 23 0:25 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore rw\n";

// An older systemd host with every controller on v1 and no cgroup2 mount (CentOS 7 style).
const char* const kPureV1Mountinfo =
    "18 62 0:17 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw,seclabel\n"
    "24 18 0:20 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:7 - tmpfs tmpfs ro,seclabel,mode=755\n"
    "25 24 0:21 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:8 - cgroup cgroup "
    "rw,seclabel,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd\n"
    "28 24 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:11 - cgroup "
    "cgroup rw,seclabel,cpu,cpuacct\n"
    "32 24 0:28 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup "
    "rw,seclabel,memory\n"
    "62 0 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/centos-root rw,seclabel,attr2,inode64,noquota\n";

TEST(Mountinfo, HybridHostOfTheBuildMachines) {
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(kHybridMountinfo, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 20u);
  EXPECT_EQ(mounts[0].root, "/");
  EXPECT_EQ(mounts[0].mount_point, "/proc");
  EXPECT_EQ(mounts[0].fs_type, "proc");
  EXPECT_EQ(mounts[0].super_options, "rw");
  EXPECT_EQ(mounts[13].mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(mounts[13].fs_type, "cgroup");
  EXPECT_EQ(mounts[13].super_options, "rw,memory");
  EXPECT_EQ(mounts[19].fs_type, "cgroup2");

  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "/sys/fs/cgroup/memory");
  EXPECT_EQ(cg.v2, "/sys/fs/cgroup/unified");
}

TEST(Mountinfo, PureV2HostWithOptionalFields) {
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(kPureV2Mountinfo, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 5u);
  EXPECT_EQ(mounts[3].mount_point, "/sys/fs/cgroup");
  EXPECT_EQ(mounts[3].super_options, "rw,nsdelegate,memory_recursiveprot");

  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "");  // memory_recursiveprot is a cgroup2 option, not the v1 controller
  EXPECT_EQ(cg.v2, "/sys/fs/cgroup");
}

TEST(Mountinfo, PureV1Host) {
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(kPureV1Mountinfo, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 6u);
  EXPECT_EQ(mounts[3].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "/sys/fs/cgroup/memory");
  EXPECT_EQ(cg.v2, "");
}

TEST(Mountinfo, ContainerViewKeepsTheHierarchyRoot) {
  // Docker on a v1 host without a cgroup namespace: the container sees only its own subtree,
  // and the root field says which one.
  const std::string text =
      "1309 1308 0:120 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755\n"
      "1315 1309 0:32 /docker/4f3a9c2e1b0d /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime "
      "master:16 - cgroup cgroup rw,memory\n"
      "1316 1309 0:38 /../.. /sys/fs/cgroup/unified ro,nosuid,nodev,noexec,relatime master:22 - "
      "cgroup2 cgroup2 rw\n";
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(text, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[1].root, "/docker/4f3a9c2e1b0d");
  EXPECT_EQ(mounts[1].mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(mounts[2].root, "/../..");
  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "/sys/fs/cgroup/memory");
  EXPECT_EQ(cg.v2, "/sys/fs/cgroup/unified");
}

TEST(Mountinfo, OctalEscapesInRootAndMountPoint) {
  const std::string text =
      "50 27 8:1 /my\\040data /mnt/usb\\040disk rw,relatime - vfat /dev/sdb1 rw\n"
      "51 27 8:2 /tab\\011and\\012newline /mnt/back\\134slash rw - ext4 /dev/sdb2 rw\n";
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(text, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].root, "/my data");
  EXPECT_EQ(mounts[0].mount_point, "/mnt/usb disk");
  EXPECT_EQ(mounts[1].root, "/tab\tand\nnewline");
  EXPECT_EQ(mounts[1].mount_point, "/mnt/back\\slash");
}

TEST(Mountinfo, EscapedCgroupMountPointIsUnescaped) {
  std::vector<MountEntry> mounts;
  ASSERT_TRUE(parse_mountinfo("35 31 0:32 / /run/my\\040cgroups/memory rw - cgroup cgroup rw,memory\n", mounts));
  EXPECT_EQ(find_cgroup_mounts(mounts).v1_memory, "/run/my cgroups/memory");
}

TEST(Mountinfo, KernelOddities) {
  // nsfs roots are not paths; an empty source prints as two spaces; tags without values;
  // several optional fields.
  const std::string text =
      "600 25 0:4 net:[4026532280] /run/netns/cni-1 rw shared:200 - nsfs nsfs rw\n"
      "601 27 0:50 / /mnt/x rw,relatime - tmpfs  rw,size=4k\n"
      "602 27 0:51 / /mnt/y rw shared:5 master:3 propagate_from:2 unbindable - fuse.sshfs me@h:/ rw,user_id=0\n";
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(text, mounts);
  ASSERT_TRUE(st) << st.error().message;
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[0].root, "net:[4026532280]");
  EXPECT_EQ(mounts[1].fs_type, "tmpfs");
  EXPECT_EQ(mounts[1].super_options, "rw,size=4k");
  EXPECT_EQ(mounts[2].fs_type, "fuse.sshfs");
  EXPECT_EQ(mounts[2].super_options, "rw,user_id=0");
}

TEST(Mountinfo, MemoryMustBeAWholeOption) {
  std::vector<MountEntry> mounts;
  ASSERT_TRUE(parse_mountinfo(
      "1 0 0:1 / /a rw - cgroup cgroup rw,memory_recursiveprot\n"
      "2 0 0:2 / /b rw - cgroup cgroup rw,nomemory\n"
      "3 0 0:3 / /c rw - cgroup2 cgroup2 rw,memory\n"   // cgroup2 does not count as v1
      "4 0 0:4 / /d rw - tmpfs cgroup rw,memory\n"     // the source is no fs type
      "5 0 0:5 / /e rw - cgroup cgroup rw,cpu,memory,blkio\n"
      "6 0 0:6 / /f rw - cgroup cgroup memory\n"       // first memory hierarchy wins
      "7 0 0:7 / /g rw - cgroup2 cgroup2 rw\n",       // first cgroup2 wins
      mounts));
  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "/e");
  EXPECT_EQ(cg.v2, "/c");
}

TEST(Mountinfo, NoCgroupsAtAll) {
  std::vector<MountEntry> mounts;
  ASSERT_TRUE(parse_mountinfo("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n", mounts));
  const CgroupMounts cg = find_cgroup_mounts(mounts);
  EXPECT_EQ(cg.v1_memory, "");
  EXPECT_EQ(cg.v2, "");
  EXPECT_EQ(find_cgroup_mounts({}).v2, "");
}

TEST(Mountinfo, ReusedVectorIsReplacedNotAppended) {
  std::vector<MountEntry> mounts;
  ASSERT_TRUE(parse_mountinfo(kHybridMountinfo, mounts));
  ASSERT_TRUE(parse_mountinfo(kPureV2Mountinfo, mounts));
  EXPECT_EQ(mounts.size(), 5u);
}

// The error for `text`, which must be refused and name `line`.
std::string refusal(const std::string& text, int line) {
  std::vector<MountEntry> mounts{MountEntry{"/", "/stale", "ext4", "rw"}};
  auto st = parse_mountinfo(text, mounts);
  if (st) {
    ADD_FAILURE() << "accepted: '" << text << "'";
    return "accepted";
  }
  EXPECT_TRUE(mounts.empty()) << "a refused table must not leave entries behind";
  if (line > 0) {
    EXPECT_NE(st.error().message.find("line " + std::to_string(line) + ":"), std::string::npos)
        << st.error().message;
  }
  return st.error().message;
}

TEST(Mountinfo, RefusesBrokenLinesNamingThem) {
  const std::string good = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";
  EXPECT_NE(refusal(good + "36 35 98:0 /mnt1 /mnt2\n", 2).find("too few fields"), std::string::npos);
  EXPECT_NE(refusal(good + "36 35 98:0 /mnt1 /mnt2 rw ext3 /dev/root rw\n", 2).find("separator"),
            std::string::npos);
  EXPECT_NE(refusal(good + "36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root\n", 2).find("too few fields after"),
            std::string::npos);
  EXPECT_NE(refusal(good + "\x01\x02\xff garbage\n", 2).find("line 2"), std::string::npos);
  refusal(good + "x 35 98:0 / /m rw - ext3 /dev/root rw\n", 2);         // id
  refusal(good + "36 -1 98:0 / /m rw - ext3 /dev/root rw\n", 2);        // parent
  refusal(good + "36 35 98 / /m rw - ext3 /dev/root rw\n", 2);          // device number
  refusal(good + "36 35 98:x / /m rw - ext3 /dev/root rw\n", 2);
  refusal(good + "36 35 98:0 / mnt rw - ext3 /dev/root rw\n", 2);       // relative mount point
  refusal(good + "36 35 98:0 / /m rw - ext3 /dev/root rw extra\n", 2);  // after super options
  refusal(good + "36 35 98:0 / /m rw - ext3 /dev/root \n", 2);          // empty super options
  refusal(good + "36 35 98:0 / /m rw -  /dev/root rw\n", 2);            // empty fs type
  refusal(good + "36 35 98:0 / /m rw  - ext3 /dev/root rw\n", 2);       // empty optional field
  refusal(good + "36  35 98:0 / /m rw - ext3 /dev/root rw\n", 2);       // two spaces
  refusal(good + "36 35 98:0 / /m rw - ext3 /dev/root rw\r\n", 2);      // CRLF copy
  refusal("36 35 98:0 /a\\04 /m rw - ext3 /dev/root rw\n", 1);          // short escape
  refusal("36 35 98:0 / /m\\ rw - ext3 /dev/root rw\n", 1);             // lone backslash at the end
  refusal("36 35 98:0 / /m\\x41 rw - ext3 /dev/root rw\n", 1);          // not octal
  refusal("36 35 98:0 / /m\\400 rw - ext3 /dev/root rw\n", 1);          // beyond a byte
  refusal("36 35 98:0 / /m\\000 rw - ext3 /dev/root rw\n", 1);          // NUL in a path
  const char raw_nul[] = "36 35 98:0 / /m\0x rw - ext3 /dev/root rw\n";  // found by fuzz_mountinfo
  refusal(std::string(raw_nul, sizeof raw_nul - 1), 1);
  refusal("36 35 98:0 / /m rw - ext3 /dev/root rw\n" + good + "99999999999999999999 1 0:0 / / rw - a b rw\n", 3);
}

TEST(Mountinfo, RefusesTruncatedAndEmptyInput) {
  std::vector<MountEntry> mounts;
  EXPECT_FALSE(parse_mountinfo("", mounts));
  EXPECT_FALSE(parse_mountinfo("\n\n", mounts));
  // Cut short mid-line (a read that stopped early): the last mount cannot be trusted.
  auto st = parse_mountinfo(std::string(kHybridMountinfo) + "42 31 0:39 / /sys/fs/cgroup/rdma rw - cgroup cg", mounts);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("truncated"), std::string::npos) << st.error().message;
  EXPECT_TRUE(mounts.empty());
  // Cut at a field boundary it would even parse: only the missing newline tells.
  EXPECT_FALSE(parse_mountinfo("41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw", mounts));
}

TEST(Mountinfo, HugeTableIsRefused) {
  std::string text;
  const std::string line = "1 1 0:1 / /m rw - tmpfs t rw\n";
  text.reserve(line.size() * 100001);
  for (int i = 0; i < 100000; ++i) text += line;
  std::vector<MountEntry> mounts;
  ASSERT_TRUE(parse_mountinfo(text, mounts));  // the cap itself is allowed
  EXPECT_EQ(mounts.size(), 100000u);
  text += line;
  auto st = parse_mountinfo(text, mounts);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("line 100001"), std::string::npos) << st.error().message;
  EXPECT_TRUE(mounts.empty());
}

TEST(Mountinfo, ErrorExcerptIsPrintableAndShort) {
  std::vector<MountEntry> mounts;
  auto st = parse_mountinfo(std::string("1 2 \x01\x02 ") + std::string(5000, 'x') + "\n", mounts);
  ASSERT_FALSE(st);
  for (char c : st.error().message) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
  EXPECT_LT(st.error().message.size(), 200u);
}

TEST(CgroupU64, ReadsOneValue) {
  EXPECT_EQ(*parse_cgroup_u64("0\n"), 0u);
  EXPECT_EQ(*parse_cgroup_u64("268435456\n"), 268435456u);
  EXPECT_EQ(*parse_cgroup_u64("18446744073709551615\n"), 18446744073709551615ull);
  EXPECT_EQ(*parse_cgroup_u64("9223372036854771712\n"), 9223372036854771712ull);  // a usage is a usage
}

TEST(CgroupU64, RefusesAnythingElse) {
  EXPECT_FALSE(parse_cgroup_u64(""));
  EXPECT_FALSE(parse_cgroup_u64("\n"));
  EXPECT_FALSE(parse_cgroup_u64("12"));          // cut before the newline
  EXPECT_FALSE(parse_cgroup_u64("12\n\n"));
  EXPECT_FALSE(parse_cgroup_u64("12\n13\n"));
  EXPECT_FALSE(parse_cgroup_u64(" 12\n"));
  EXPECT_FALSE(parse_cgroup_u64("12 \n"));
  EXPECT_FALSE(parse_cgroup_u64("12\r\n"));
  EXPECT_FALSE(parse_cgroup_u64("-1\n"));
  EXPECT_FALSE(parse_cgroup_u64("+1\n"));
  EXPECT_FALSE(parse_cgroup_u64("0x10\n"));
  EXPECT_FALSE(parse_cgroup_u64("max\n"));       // not a limit file
  EXPECT_FALSE(parse_cgroup_u64("\x01\xff\n"));
  auto over = parse_cgroup_u64("18446744073709551616\n");
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("overflows"), std::string::npos) << over.error().message;
  EXPECT_FALSE(parse_cgroup_u64(std::string(100000, '9') + "\n"));
  auto cut = parse_cgroup_u64("2684");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("truncated"), std::string::npos) << cut.error().message;
}

TEST(CgroupLimit, MaxAndV1UnlimitedAreAbsent) {
  auto max = parse_cgroup_limit("max\n");
  ASSERT_TRUE(max) << max.error().message;
  EXPECT_FALSE(max->has_value());
  // v1 "no limit" with 4 KiB pages (PAGE_COUNTER_MAX * 4096) and with 64 KiB pages.
  auto v1_4k = parse_cgroup_limit("9223372036854771712\n");
  ASSERT_TRUE(v1_4k);
  EXPECT_FALSE(v1_4k->has_value());
  auto v1_64k = parse_cgroup_limit("9223372036854710272\n");
  ASSERT_TRUE(v1_64k);
  EXPECT_FALSE(v1_64k->has_value());
  auto huge = parse_cgroup_limit("18446744073709551615\n");
  ASSERT_TRUE(huge);
  EXPECT_FALSE(huge->has_value());
}

TEST(CgroupLimit, NumbersBelowTheThresholdAreLimits) {
  auto limit = parse_cgroup_limit("268435456\n");
  ASSERT_TRUE(limit);
  ASSERT_TRUE(limit->has_value());
  EXPECT_EQ(**limit, 268435456u);
  auto zero = parse_cgroup_limit("0\n");  // memory.low's default: a real value, not "unlimited"
  ASSERT_TRUE(zero);
  ASSERT_TRUE(zero->has_value());
  EXPECT_EQ(**zero, 0u);
  auto below = parse_cgroup_limit(std::to_string(kCgroupV1Unlimited - 1) + "\n");
  ASSERT_TRUE(below);
  ASSERT_TRUE(below->has_value());
  EXPECT_EQ(**below, kCgroupV1Unlimited - 1);
  auto at = parse_cgroup_limit(std::to_string(kCgroupV1Unlimited) + "\n");
  ASSERT_TRUE(at);
  EXPECT_FALSE(at->has_value());
}

TEST(CgroupLimit, RefusesAnythingElse) {
  EXPECT_FALSE(parse_cgroup_limit(""));
  EXPECT_FALSE(parse_cgroup_limit("\n"));
  EXPECT_FALSE(parse_cgroup_limit("max"));      // cut before the newline
  EXPECT_FALSE(parse_cgroup_limit("ma\n"));     // cut, then a newline from somewhere
  EXPECT_FALSE(parse_cgroup_limit("MAX\n"));
  EXPECT_FALSE(parse_cgroup_limit("max \n"));
  EXPECT_FALSE(parse_cgroup_limit("max\nmax\n"));
  EXPECT_FALSE(parse_cgroup_limit("1024"));
  EXPECT_FALSE(parse_cgroup_limit("-1\n"));     // what one writes to v1, never what it prints
  EXPECT_FALSE(parse_cgroup_limit("1k\n"));
  EXPECT_FALSE(parse_cgroup_limit("18446744073709551616\n"));
  EXPECT_FALSE(parse_cgroup_limit("garbage\x01\n"));
}

}  // namespace
}  // namespace memdiag
