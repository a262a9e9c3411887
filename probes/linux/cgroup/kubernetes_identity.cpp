// SPDX-License-Identifier: Apache-2.0
#include "probes/linux/cgroup/kubernetes_identity.hpp"

#include <array>
#include <utility>

namespace memdiag {
namespace {

// Longer than any id these runtimes make (64 hex digits for containerd, Docker and CRI-O; 36
// for a pod UUID, 32 for a static pod's config hash): anything longer is not an id.
constexpr std::size_t kMaxContainerId = 128;
constexpr std::size_t kMaxPodUid = 64;
// systemd refuses unit names longer than this (UNIT_NAME_MAX).
constexpr std::size_t kMaxUnitName = 255;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool consume_prefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool consume_suffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

// The next path component, advancing `rest`; "" at the end. Empty components ("//", a
// trailing '/') are skipped, as path resolution does.
std::string_view next_component(std::string_view& rest) {
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  const std::size_t slash = rest.find('/');
  const std::string_view component = rest.substr(0, slash);
  rest.remove_prefix(component.size());
  return component;
}

// A pod UID as the API server spells it, from a cgroup name's spelling of it: cgroupfs keeps
// the dashes, the systemd driver writes them as '_' because '-' means nesting in a slice name.
// "" if it is not hex digits and dashes (a UUID, or a static pod's config hash).
std::string pod_uid_from(std::string_view spelled, char dash) {
  if (spelled.empty() || spelled.size() > kMaxPodUid) return {};
  std::string uid(spelled);
  for (char& c : uid) {
    if (c == dash) {
      c = '-';
    } else if (!is_hex(c)) {
      return {};
    }
  }
  return uid;
}

bool is_container_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxContainerId) return false;
  for (char c : id) {
    if (!is_alnum(c)) return false;
  }
  return true;
}

// The container id in a container cgroup's name, "" if the name is not a container's.
//   systemd driver: "cri-containerd-<id>.scope", "docker-<id>.scope", "crio-<id>.scope"
//   cgroupfs:       "<id>", or the same runtime prefixes without ".scope" (CRI-O's "crio-<id>")
// CRI-O also gives each container's monitor a cgroup beside it, "crio-conmon-<id>": that is
// not the container, and labelling it as one would double the container's series.
std::string_view container_id_from(std::string_view name, bool systemd) {
  if (systemd && !consume_suffix(name, ".scope")) return {};
  if (name.starts_with("crio-conmon-")) return {};
  const bool prefixed =
      consume_prefix(name, "cri-containerd-") || consume_prefix(name, "docker-") || consume_prefix(name, "crio-");
  if (systemd && !prefixed) return {};
  return is_container_id(name) ? name : std::string_view{};
}

// cgroupfs driver, below a "kubepods" component:
//   burstable/pod<uid>/<id>, besteffort/pod<uid>/<id>, pod<uid>/<id> (guaranteed)
void identify_cgroupfs(std::string_view rest, WorkloadIdentity& id) {
  std::string_view component = next_component(rest);
  std::string_view qos = "guaranteed";
  if (component == "burstable" || component == "besteffort") {
    qos = component;
    id.qos_class = qos;  // the QoS cgroup itself, even if nothing follows
    component = next_component(rest);
  }
  if (!consume_prefix(component, "pod")) return;
  std::string uid = pod_uid_from(component, '-');
  if (uid.empty()) return;
  id.qos_class = qos;
  id.pod_uid = std::move(uid);
  id.container_id = container_id_from(next_component(rest), /*systemd=*/false);
}

// systemd driver, below a kubepods slice named `base` + ".slice". Slice names spell their
// whole ancestry, so every name below starts with `base` ("kubepods", or "kubelet-kubepods"
// when kubelet's cgroup root is itself a slice):
//   <base>-burstable.slice/<base>-burstable-pod<uid_>.slice/cri-containerd-<id>.scope
//   <base>-pod<uid_>.slice/docker-<id>.scope (guaranteed)
void identify_systemd(std::string_view base, std::string_view rest, WorkloadIdentity& id) {
  std::string_view component = next_component(rest);
  if (!consume_prefix(component, base) || !consume_prefix(component, "-")) return;
  std::string_view qos = "guaranteed";
  for (std::string_view cls : {std::string_view("burstable"), std::string_view("besteffort")}) {
    std::string_view name = component;
    if (consume_prefix(name, cls) && name == ".slice") {
      qos = cls;
      id.qos_class = qos;  // the QoS slice itself, even if nothing follows
      component = next_component(rest);
      if (!consume_prefix(component, base) || !consume_prefix(component, "-") ||
          !consume_prefix(component, cls) || !consume_prefix(component, "-")) {
        return;
      }
      break;
    }
  }
  if (!consume_prefix(component, "pod") || !consume_suffix(component, ".slice")) return;
  std::string uid = pod_uid_from(component, '_');
  if (uid.empty()) return;
  id.qos_class = qos;
  id.pod_uid = std::move(uid);
  id.container_id = container_id_from(next_component(rest), /*systemd=*/true);
}

// "kubepods.slice", or a kubepods slice nested in another slice ("kubelet-kubepods.slice").
bool is_kubepods_slice(std::string_view name) {
  return name == "kubepods.slice" || name.ends_with("-kubepods.slice");
}

// A systemd unit of a type that owns a cgroup, with the characters systemd allows in names.
bool is_unit_name(std::string_view name) {
  if (name.size() > kMaxUnitName) return false;
  static constexpr std::array<std::string_view, 6> kSuffixes = {".service", ".scope", ".slice",
                                                                ".socket", ".mount", ".swap"};
  std::string_view prefix;
  bool typed = false;
  for (std::string_view suffix : kSuffixes) {
    prefix = name;
    if (consume_suffix(prefix, suffix)) {
      typed = true;
      break;
    }
  }
  if (!typed || prefix.empty()) return false;
  for (char c : prefix) {
    if (!is_alnum(c) && c != ':' && c != '-' && c != '_' && c != '.' && c != '\\' && c != '@') return false;
  }
  return true;
}

}  // namespace

WorkloadIdentity identify_cgroup(std::string_view path) {
  WorkloadIdentity id;
  std::string_view rest = path;
  std::string_view innermost_unit;
  // The first kubepods component wins: kubepods can sit below something else (a cgroup root
  // given to kubelet, a kind node's container), and when a cluster runs inside a pod of another,
  // the outer pod is the one the node's own API server knows.
  for (std::string_view component = next_component(rest); !component.empty();
       component = next_component(rest)) {
    if (component == "kubepods") {
      identify_cgroupfs(rest, id);
      return id;
    }
    if (is_kubepods_slice(component)) {
      std::string_view base = component;
      consume_suffix(base, ".slice");
      identify_systemd(base, rest, id);
      return id;
    }
    if (is_unit_name(component)) innermost_unit = component;
  }
  id.unit = innermost_unit;
  return id;
}

}  // namespace memdiag
