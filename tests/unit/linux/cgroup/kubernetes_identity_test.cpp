// SPDX-License-Identifier: Apache-2.0
// Who a cgroup belongs to, from its path: kubelet's layouts under both cgroup drivers, nested
// below other hierarchies, systemd units outside Kubernetes, and paths that are neither.
#include <gtest/gtest.h>

#include <string>

#include "probes/linux/cgroup/kubernetes_identity.hpp"

namespace memdiag {
namespace {

constexpr const char* kUid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
constexpr const char* kUidSystemd = "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0";
constexpr const char* kCid = "9d7e8f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6";

std::string str(const char* s) { return s; }

// Readable failures: all four fields at once.
std::string show(const WorkloadIdentity& id) {
  return "{pod_uid='" + id.pod_uid + "' qos='" + id.qos_class + "' container='" + id.container_id +
         "' unit='" + id.unit + "'}";
}

void expect_identity(const std::string& path, const std::string& pod_uid, const std::string& qos,
                     const std::string& container, const std::string& unit) {
  const WorkloadIdentity id = identify_cgroup(path);
  EXPECT_EQ(id.pod_uid, pod_uid) << path << " -> " << show(id);
  EXPECT_EQ(id.qos_class, qos) << path << " -> " << show(id);
  EXPECT_EQ(id.container_id, container) << path << " -> " << show(id);
  EXPECT_EQ(id.unit, unit) << path << " -> " << show(id);
}

TEST(KubernetesIdentity, CgroupfsDriver) {
  const std::string pod = str("pod") + kUid;
  expect_identity("/kubepods/burstable/" + pod + "/" + kCid, kUid, "burstable", kCid, "");
  expect_identity("/kubepods/besteffort/" + pod + "/" + kCid, kUid, "besteffort", kCid, "");
  expect_identity("/kubepods/" + pod + "/" + kCid, kUid, "guaranteed", kCid, "");
  // CRI-O names its cgroupfs container cgroups "crio-<id>"; its monitor is not the container.
  expect_identity("/kubepods/burstable/" + pod + "/crio-" + kCid, kUid, "burstable", kCid, "");
  expect_identity("/kubepods/burstable/" + pod + "/crio-conmon-" + kCid, kUid, "burstable", "", "");
}

TEST(KubernetesIdentity, SystemdDriver) {
  const std::string b = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + str(kUidSystemd) + ".slice";
  expect_identity(b + "/cri-containerd-" + kCid + ".scope", kUid, "burstable", kCid, "");
  expect_identity(b + "/docker-" + kCid + ".scope", kUid, "burstable", kCid, "");
  expect_identity(b + "/crio-" + kCid + ".scope", kUid, "burstable", kCid, "");
  expect_identity(b + "/crio-conmon-" + kCid + ".scope", kUid, "burstable", "", "");
  const std::string be =
      "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + str(kUidSystemd) + ".slice";
  expect_identity(be + "/cri-containerd-" + kCid + ".scope", kUid, "besteffort", kCid, "");
  const std::string g = "/kubepods.slice/kubepods-pod" + str(kUidSystemd) + ".slice";
  expect_identity(g + "/cri-containerd-" + kCid + ".scope", kUid, "guaranteed", kCid, "");
}

TEST(KubernetesIdentity, PodAndQosCgroupsThemselves) {
  expect_identity("/kubepods/burstable/pod" + str(kUid), kUid, "burstable", "", "");
  expect_identity("/kubepods/pod" + str(kUid), kUid, "guaranteed", "", "");
  expect_identity("/kubepods.slice/kubepods-pod" + str(kUidSystemd) + ".slice", kUid, "guaranteed", "", "");
  expect_identity("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + str(kUidSystemd) + ".slice",
                  kUid, "besteffort", "", "");
  expect_identity("/kubepods/burstable", "", "burstable", "", "");
  expect_identity("/kubepods.slice/kubepods-besteffort.slice", "", "besteffort", "", "");
  // The kubepods root holds every pod: no pod, no QoS class, and no unit label either.
  expect_identity("/kubepods", "", "", "", "");
  expect_identity("/kubepods.slice", "", "", "", "");
}

TEST(KubernetesIdentity, KubepodsNestedBelowSomethingElse) {
  // kind / kubeadm with kubelet's cgroup root in "kubelet.slice": slice names carry the prefix.
  expect_identity("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
                  "kubelet-kubepods-burstable-pod" + str(kUidSystemd) + ".slice/cri-containerd-" + kCid + ".scope",
                  kUid, "burstable", kCid, "");
  expect_identity("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" + str(kUidSystemd) +
                      ".slice/cri-containerd-" + kCid + ".scope",
                  kUid, "guaranteed", kCid, "");
  // The same kind node seen from its host, inside the node container's scope.
  expect_identity("/system.slice/docker-1234abcd.scope/kubelet.slice/kubelet-kubepods.slice/"
                  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + str(kUidSystemd) + ".slice",
                  kUid, "besteffort", "", "");
  // cgroupfs below a cgroup root, or docker-in-docker.
  expect_identity("/kubelet/kubepods/besteffort/pod" + str(kUid) + "/" + kCid, kUid, "besteffort", kCid, "");
  expect_identity("/docker/1234abcd/kubepods/pod" + str(kUid) + "/" + kCid, kUid, "guaranteed", kCid, "");
  // Processes below a container cgroup belong to that container.
  expect_identity("/kubepods/pod" + str(kUid) + "/" + kCid + "/init.scope", kUid, "guaranteed", kCid, "");
}

TEST(KubernetesIdentity, UidSpellingMustMatchTheDriver) {
  // systemd writes the UID's dashes as '_' (a '-' there would mean another slice level).
  expect_identity("/kubepods.slice/kubepods-pod" + str(kUid) + ".slice", "", "", "", "");
  expect_identity("/kubepods/pod" + str(kUidSystemd), "", "", "", "");
  // A static pod's UID is its config hash: 32 hex digits without dashes.
  expect_identity("/kubepods/burstable/pod6b1f5c9e0a2d4c7e8f1a3b5c7d9e0f21", "6b1f5c9e0a2d4c7e8f1a3b5c7d9e0f21",
                  "burstable", "", "");
}

TEST(KubernetesIdentity, SystemdUnitsOutsideKubepods) {
  expect_identity("/system.slice/docker.service", "", "", "", "docker.service");
  expect_identity("/system.slice/containerd.service", "", "", "", "containerd.service");
  expect_identity("/user.slice/user-1000.slice/session-3.scope", "", "", "", "session-3.scope");
  expect_identity("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                  "app-gnome-firefox-4242.scope", "", "", "", "app-gnome-firefox-4242.scope");
  expect_identity("/system.slice", "", "", "", "system.slice");
  expect_identity("/init.scope", "", "", "", "init.scope");
  expect_identity("/system.slice/systemd-journald.service", "", "", "", "systemd-journald.service");
  expect_identity("/system.slice/dev-hugepages.mount", "", "", "", "dev-hugepages.mount");
  expect_identity("/system.slice/system-getty.slice/getty@tty1.service", "", "", "", "getty@tty1.service");
  // Plain directories below a unit still belong to it (a service that makes its own cgroups).
  expect_identity("/system.slice/docker-1234abcd.scope/worker/1", "", "", "", "docker-1234abcd.scope");
}

TEST(KubernetesIdentity, NeitherPodNorUnit) {
  expect_identity("/", "", "", "", "");
  expect_identity("", "", "", "", "");
  expect_identity("/memdiag-test", "", "", "", "");
  expect_identity("/docker/" + str(kCid), "", "", "", "");  // Docker's cgroupfs layout, no unit
  expect_identity("/kubepodsx/pod" + str(kUid), "", "", "", "");
  expect_identity("/.slice", "", "", "", "");
  expect_identity("/my service.service", "", "", "", "");
}

TEST(KubernetesIdentity, GarbageGivesEmptyFields) {
  expect_identity("/kubepods/burstable/pod", "", "burstable", "", "");
  expect_identity("/kubepods/burstable/podxyz/" + str(kCid), "", "burstable", "", "");
  expect_identity("/kubepods/pod" + str(kUid) + "/not-an-id", kUid, "guaranteed", "", "");
  expect_identity("/kubepods/pod" + str(kUid) + "/" + std::string(129, 'a'), kUid, "guaranteed", "", "");
  expect_identity("/kubepods/pod" + std::string(65, 'a'), "", "", "", "");
  expect_identity("/kubepods/silver/pod" + str(kUid), "", "", "", "");
  expect_identity("/kubepods.slice/kubepods-silver.slice", "", "", "", "");
  expect_identity("/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" + str(kUidSystemd) + ".slice",
                  "", "burstable", "", "");
  expect_identity("/kubepods.slice/other-pod" + str(kUidSystemd) + ".slice", "", "", "", "");
  expect_identity("/kubepods.slice/kubepods-pod" + str(kUidSystemd) + ".slice/" + kCid + ".scope", kUid,
                  "guaranteed", "", "");  // no runtime prefix
  expect_identity("/kubepods.slice/kubepods-pod" + str(kUidSystemd) + ".slice/docker-.scope", kUid,
                  "guaranteed", "", "");
  expect_identity("/kubepods.slice/kubepods-pod" + str(kUidSystemd) + ".slice/docker-" + kCid, kUid,
                  "guaranteed", "", "");  // no ".scope"
  expect_identity("/kubepods.slice/kubepods-pod.slice", "", "", "", "");
  expect_identity("///kubepods//pod" + str(kUid) + "//" + kCid + "/", kUid, "guaranteed", kCid, "");
  expect_identity(std::string("/system.slice/\x01\xff.service"), "", "", "", "system.slice");
  expect_identity("/" + std::string(300, 'a') + ".service", "", "", "", "");
  // Long and deep paths are walked, not recursed into.
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "/a";
  expect_identity(deep, "", "", "", "");
  expect_identity(deep + "/kubepods/pod" + kUid, kUid, "guaranteed", "", "");
}

}  // namespace
}  // namespace memdiag
