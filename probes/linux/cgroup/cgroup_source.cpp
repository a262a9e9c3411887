// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/cgroup_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "probes/core/cgroup_limit_tree.hpp"
#include "probes/linux/cgroup/kubernetes_identity.hpp"
#include "probes/linux/cgroup/oomd_marks.hpp"

namespace memdiag {
namespace {

// Limited cgroups listed for the overcommit model (CgroupSection::limits), shallowest first:
// beyond this, a deeper cgroup's promises are capped by its kept ancestors (or not at all).
constexpr std::size_t kMaxLimitsListed = 256;

// How urgent a cgroup looks: stalling first, then nearness to its limit, then size.
struct Rank {
  double pressure;
  double fill;
  double usage;
};

Rank rank_of(const CgroupSample& c) {
  Rank r{0, 0, 0};
  if (c.pressure) r.pressure = c.pressure->some.avg10;
  if (c.usage_bytes) r.usage = static_cast<double>(*c.usage_bytes);
  if (c.usage_bytes && c.limit_bytes && *c.limit_bytes > 0) r.fill = r.usage / static_cast<double>(*c.limit_bytes);
  return r;
}

}  // namespace

CgroupSource::CgroupSource(const KernelPaths& paths, const CgroupOptions& options)
    : paths_(paths),
      discovery_(options.cgroup_discovery),
      max_cgroups_(options.max_cgroups),
      max_watched_(options.max_watched_cgroups),
      mountinfo_(paths.procfs + "/self/mountinfo"),
      // The v1 event watcher holds four eventfds per watched cgroup out of the same limit.
      reader_(cgroup_descriptor_budget() > 4 * max_watched_ ? cgroup_descriptor_budget() - 4 * max_watched_ : 0) {}

void CgroupSource::use_hierarchy(MemoryHierarchy hierarchy) {
  if (!(hierarchy == hierarchy_)) {
    files_.clear();  // pointers into the reader's cache, which is emptied next
    files_walk_ = kNoWalk;
    reader_.reset();
  }
  hierarchy_ = std::move(hierarchy);
  const auto kind = hierarchy_.version == CgroupVersion::kV2 ? CgroupEventWatcher::Kind::kV2Inotify
                                                             : CgroupEventWatcher::Kind::kV1Eventfd;
  if (max_watched_ > 0 && (!watcher_ || watcher_->kind() != kind)) watcher_ = std::make_unique<CgroupEventWatcher>(kind);
  if (!oomd_watcher_) oomd_watcher_ = std::make_unique<OomdMarkWatcher>();
  oomd_watch_walk_ = kNoWalk;
}

Status CgroupSource::probe() {
  auto found = find_memory_hierarchy(paths_, mountinfo_);
  if (!found) return found.error();
  use_hierarchy(std::move(found).value());
  return Ok{};
}

Status CgroupSource::sample(Snapshot& out) {
  CgroupSection section;
  section.mode = hierarchy_.mode;
  section.page_bytes = static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE));
  struct stat st{};
  if (::stat(hierarchy_.root.c_str(), &st) != 0) return make_error(hierarchy_.root + ": the cgroup hierarchy is gone");
  const std::uint64_t walks_before = tree_.walks();
  const auto& discovered = tree_.cgroups(hierarchy_.root, discovery_);
  if (tree_.walks() != walks_before) oomd_marks_.clear();  // re-read for every cgroup listed
  if (oomd_watcher_ && (oomd_watch_walk_ != tree_.walks() || !oomd_watcher_->working())) {
    std::vector<std::string> paths;
    paths.reserve(discovered.size());
    for (const auto& d : discovered) paths.push_back(d.path);
    oomd_watcher_->watch(hierarchy_.root, paths);
    oomd_watch_walk_ = tree_.walks();
  }
  if (oomd_watcher_ && oomd_watcher_->working()) section.userspace_oom_kills = oomd_watcher_->recent();
  if (files_walk_ != tree_.walks() || files_.size() != discovered.size()) {
    files_.clear();
    for (const auto& d : discovered) files_.push_back(&reader_.files_for(d.path));
    files_walk_ = tree_.walks();
  }

  std::vector<CgroupSample> samples;
  samples.reserve(discovered.size());
  std::string dir;
  std::string psi_dir;
  std::vector<CgroupReader::Files*> sampled_files;  // parallel to `samples`
  sampled_files.reserve(discovered.size());
  for (std::size_t i = 0; i < discovered.size(); ++i) {
    const DiscoveredCgroup& d = discovered[i];
    CgroupSample c;
    c.path = d.path;
    c.leaf = d.leaf;
    dir.assign(hierarchy_.root);
    if (d.path != "/") dir.append(d.path);
    // Hybrid: PSI lives in the cgroup2 twin at the same path, if the workload was put there too.
    psi_dir.assign(hierarchy_.psi_root);
    if (!hierarchy_.psi_root.empty() && d.path != "/") psi_dir.append(d.path);
    const auto outcome = reader_.read_core(hierarchy_.version, *files_[i], d.path == "/", dir, psi_dir, c);
    if (outcome.vanished) continue;
    section.malformed_files += outcome.malformed_files;
    if (section.first_malformed.empty()) section.first_malformed = outcome.first_error;
    if (c.leaf) {
      if (c.limited && c.limit_bytes) {
        section.leaf_limits_sum_bytes += *c.limit_bytes;
        ++section.limited_leaves;
      } else {
        ++section.unlimited_leaves;
      }
    }
    samples.push_back(std::move(c));
    sampled_files.push_back(files_[i]);
  }
  section.discovered = samples.size();
  {
    std::vector<CgroupLimitInput> limit_inputs;
    limit_inputs.reserve(samples.size());
    for (const CgroupSample& c : samples) {
      limit_inputs.push_back(CgroupLimitInput{
          c.path, c.limited ? c.limit_bytes : std::nullopt, c.usage_bytes});
    }
    CgroupLimitTree tree = build_limit_tree(limit_inputs, kMaxLimitsListed);
    section.effective_limits_sum_bytes = tree.effective_limits_sum_bytes;
    section.limits = std::move(tree.limits);
    section.limits_dropped = tree.limits_dropped;
  }

  // Most important first; the path keeps the order stable between samples.
  std::vector<std::pair<Rank, std::size_t>> order;
  order.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) order.emplace_back(rank_of(samples[i]), i);
  const auto more_urgent = [&samples](const auto& a, const auto& b) {
    if (a.first.pressure != b.first.pressure) return a.first.pressure > b.first.pressure;
    if (a.first.fill != b.first.fill) return a.first.fill > b.first.fill;
    if (a.first.usage != b.first.usage) return a.first.usage > b.first.usage;
    return samples[a.second].path < samples[b.second].path;
  };
  const std::size_t kept = std::min(order.size(), max_cgroups_);
  if (kept < order.size()) {
    // A quarter of the cap goes to the largest holders whatever their pressure: during a stall
    // every busy cgroup has some, and the idle job holding the memory (the cause) has none;
    // ranking by pressure alone would drop it first and name its victims instead.
    const std::size_t largest = kept / 4;
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(largest), order.end(),
                      [&samples](const auto& a, const auto& b) {
                        if (a.first.usage != b.first.usage) return a.first.usage > b.first.usage;
                        return samples[a.second].path < samples[b.second].path;
                      });
    std::partial_sort(order.begin() + static_cast<std::ptrdiff_t>(largest),
                      order.begin() + static_cast<std::ptrdiff_t>(kept), order.end(), more_urgent);
    order.resize(kept);
  }
  std::sort(order.begin(), order.end(), more_urgent);
  section.cgroups.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    CgroupSample& c = samples[order[i].second];
    CgroupReader::Outcome outcome;
    dir.assign(hierarchy_.root);
    if (c.path != "/") dir.append(c.path);
    reader_.read_details(hierarchy_.version, *sampled_files[order[i].second], dir, c, outcome);
    // Userspace OOM killers' marks: read when the watch saw an attribute change (or cannot
    // watch), kept between samples otherwise; a listxattr per cgroup and sample cost ~2.5 us,
    // a tenth of a cgroup's sample.
    auto mark = oomd_marks_.find(c.path);
    if (mark == oomd_marks_.end() || tree_.attributes_may_have_changed(dir, walks_before)) {
      CgroupSample marks;
      read_oomd_marks(dir, marks);
      mark = oomd_marks_.insert_or_assign(c.path, OomdMarks{marks.oomd_user_kills, marks.oomd_trusted_kills}).first;
    }
    c.oomd_user_kills = mark->second.user;
    c.oomd_trusted_kills = mark->second.trusted;
    // Only the exported ones need their labels. Pods are recognised by the whole path in the
    // hierarchy, also when this mount shows only a part of it (a container's own cgroup).
    const std::string& prefix = hierarchy_.root_in_hierarchy;
    c.identity = prefix.empty() ? identify_cgroup(c.path) : identify_cgroup(prefix + (c.path == "/" ? "" : c.path));
    section.malformed_files += outcome.malformed_files;
    if (section.first_malformed.empty()) section.first_malformed = outcome.first_error;
    section.cgroups.push_back(std::move(c));
  }
  section.dropped = samples.size() - kept;
  reader_.end_sample();
  section.tree_walks = tree_.walks();
  section.open_files = reader_.open_files();
  if (watcher_) {
    // Watch the most important exported cgroups; counts start when a cgroup is first watched.
    std::vector<std::string> dirs;
    for (std::size_t i = 0; i < section.cgroups.size() && i < max_watched_; ++i) {
      const std::string& path = section.cgroups[i].path;
      dirs.push_back(path == "/" ? hierarchy_.root : hierarchy_.root + path);
    }
    watcher_->watch(dirs);
    for (std::size_t i = 0; i < dirs.size(); ++i) section.cgroups[i].notifications = watcher_->counts(dirs[i]);
    section.watched = watcher_->watched();
    section.oom_notifications = watcher_->oom_total();
    unwatchable_reason_ = watcher_->unwatchable_reason();
  }
  first_malformed_ = section.first_malformed;
  out.cgroups = std::move(section);
  return Ok{};
}

std::string CgroupSource::degraded() const {
  std::string what;
  if (!first_malformed_.empty()) what = "unparsable cgroup file (memdiag_cgroup_malformed_files counts them): " + first_malformed_;
  if (!tree_.unwatched_reason().empty()) {
    if (!what.empty()) what += "; ";
    what += "the cgroup tree is walked every sample: " + tree_.unwatched_reason();
  }
  if (!unwatchable_reason_.empty()) {
    if (!what.empty()) what += "; ";
    what += "memory pressure and OOM notifications cannot be registered (memdiag_cgroups_watched counts the cgroups "
            "watched): " + unwatchable_reason_;
  }
  return what;
}

}  // namespace memdiag
