#include "probes/linux/cgroup_source.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "probes/linux/mountinfo_parser.hpp"

namespace memdiag {
namespace {

bool lists_word(std::string_view text, std::string_view word) {
  std::size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string_view::npos) {
    const bool starts = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == '\n';
    const std::size_t end = pos + word.size();
    const bool ends = end == text.size() || text[end] == ' ' || text[end] == '\n';
    if (starts && ends) return true;
    pos = end;
  }
  return false;
}

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

CgroupSource::CgroupSource(const KernelPaths& paths, const SourceOptions& options)
    : paths_(paths),
      discovery_(options.cgroup_discovery),
      max_cgroups_(options.max_cgroups),
      max_watched_(options.max_watched_cgroups),
      mountinfo_(paths.procfs + "/self/mountinfo") {}

std::string CgroupSource::host_path(const std::string& mount_point) const {
  if (mount_point == "/sys" || mount_point.rfind("/sys/", 0) == 0) return paths_.sysfs + mount_point.substr(4);
  return mount_point;
}

void CgroupSource::use_hierarchy(CgroupVersion version, std::string root, std::string psi_root) {
  if (version != version_ || root != root_ || psi_root != psi_root_) {
    files_.clear();  // pointers into the reader's cache, which is emptied next
    files_walk_ = kNoWalk;
    reader_.reset();
  }
  version_ = version;
  root_ = std::move(root);
  psi_root_ = std::move(psi_root);
  if (version_ == CgroupVersion::kV2) {
    mode_ = "v2";
  } else {
    mode_ = psi_root_.empty() ? "v1" : "hybrid";
  }
  const auto kind = version_ == CgroupVersion::kV2 ? CgroupEventWatcher::Kind::kV2Inotify
                                                   : CgroupEventWatcher::Kind::kV1Eventfd;
  if (max_watched_ > 0 && (!watcher_ || watcher_->kind() != kind)) watcher_ = std::make_unique<CgroupEventWatcher>(kind);
}

Status CgroupSource::probe() {
  auto text = mountinfo_.read();
  if (!text) return text.error();
  std::vector<MountEntry> mounts;
  if (auto st = parse_mountinfo(*text, mounts); !st) return make_error(mountinfo_.path() + ": " + st.error().message);
  const CgroupMounts found = find_cgroup_mounts(mounts);
  std::string buffer;
  if (!found.v2.empty()) {
    auto controllers = read_file_once(host_path(found.v2) + "/cgroup.controllers", buffer);
    if (controllers && lists_word(*controllers, "memory")) {
      use_hierarchy(CgroupVersion::kV2, host_path(found.v2), "");
      identity_prefix_ = found.v2_root == "/" ? "" : found.v2_root;
      return Ok{};
    }
  }
  if (!found.v1_memory.empty()) {
    use_hierarchy(CgroupVersion::kV1, host_path(found.v1_memory), found.v2.empty() ? "" : host_path(found.v2));
    identity_prefix_ = found.v1_memory_root == "/" ? "" : found.v1_memory_root;
    return Ok{};
  }
  return make_error("no memory cgroup hierarchy in " + mountinfo_.path() +
                    " (neither cgroup2 with the memory controller nor a cgroup v1 memory mount)");
}

Status CgroupSource::sample(Snapshot& out) {
  CgroupSection section;
  section.mode = mode_;
  struct stat st{};
  if (::stat(root_.c_str(), &st) != 0) return make_error(root_ + ": the cgroup hierarchy is gone");
  const auto& discovered = tree_.cgroups(root_, discovery_);
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
    dir.assign(root_);
    if (d.path != "/") dir.append(d.path);
    // Hybrid: PSI lives in the cgroup2 twin at the same path, if the workload was put there too.
    psi_dir.assign(psi_root_);
    if (!psi_root_.empty() && d.path != "/") psi_dir.append(d.path);
    const auto outcome = reader_.read_core(version_, *files_[i], d.path == "/", dir, psi_dir, c);
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

  // Most important first; the path keeps the order stable between samples.
  std::vector<std::pair<Rank, std::size_t>> order;
  order.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) order.emplace_back(rank_of(samples[i]), i);
  std::sort(order.begin(), order.end(), [&samples](const auto& a, const auto& b) {
    if (a.first.pressure != b.first.pressure) return a.first.pressure > b.first.pressure;
    if (a.first.fill != b.first.fill) return a.first.fill > b.first.fill;
    if (a.first.usage != b.first.usage) return a.first.usage > b.first.usage;
    return samples[a.second].path < samples[b.second].path;
  });
  const std::size_t kept = std::min(order.size(), max_cgroups_);
  section.cgroups.reserve(kept);
  for (std::size_t i = 0; i < kept; ++i) {
    CgroupSample& c = samples[order[i].second];
    CgroupReader::Outcome outcome;
    dir.assign(root_);
    if (c.path != "/") dir.append(c.path);
    reader_.read_details(version_, *sampled_files[order[i].second], dir, c, outcome);
    // Only the exported ones need their labels. Pods are recognised by the whole path in the
    // hierarchy, also when this mount shows only a part of it (a container's own cgroup).
    c.identity = identity_prefix_.empty() ? identify_cgroup(c.path)
                                          : identify_cgroup(identity_prefix_ + (c.path == "/" ? "" : c.path));
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
      dirs.push_back(path == "/" ? root_ : root_ + path);
    }
    watcher_->watch(dirs);
    for (std::size_t i = 0; i < dirs.size(); ++i) section.cgroups[i].notifications = watcher_->counts(dirs[i]);
    section.watched = watcher_->watched();
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
  return what;
}

}  // namespace memdiag
