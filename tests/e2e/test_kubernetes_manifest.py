# SPDX-License-Identifier: Apache-2.0
"""deploy/kubernetes/memdiagd.yaml, the DaemonSet and what goes with it, parsed and held against
what it must say: the host's pid namespace, the host's /proc, /sys and /sys/fs/bpf read-only,
the systemd unit's capabilities (read from the unit, so the two cannot drift) instead of
privileged, limits within the unit's MemoryMax, a priority class defined beside it, one port
everywhere, a ServiceMonitor that finds the Service and names nodes as instances. The
ConfigMap's config goes through the real daemon's --check-config. No API server is reachable
here (kubectl needs one even for a client-side dry run), so none validates the manifest."""
import os
import re
import subprocess
import tempfile
import unittest

import yaml

from harness import MEMDIAGD, REPO, free_port

MANIFEST = os.path.join(REPO, "deploy", "kubernetes", "memdiagd.yaml")
UNIT = os.path.join(REPO, "deploy", "systemd", "memdiagd.service")
KINDS = ["ConfigMap", "DaemonSet", "Namespace", "PriorityClass", "Service", "ServiceAccount", "ServiceMonitor"]


def unit_service_directives():
    """{key: [values]} of the unit's [Service] section."""
    directives, section = {}, None
    with open(UNIT) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "Service":
                key, _, value = line.partition("=")
                directives.setdefault(key.strip(), []).append(value.strip())
    return directives


def unit_capabilities():
    """The unit's CapabilityBoundingSet, and IPC_LOCK where it lifts RLIMIT_MEMLOCK instead
    (LimitMEMLOCK=infinity): a pod has no rlimit setting, only the capability."""
    directives = unit_service_directives()
    caps = {"IPC_LOCK"} if directives.get("LimitMEMLOCK") == ["infinity"] else set()
    for value in directives["CapabilityBoundingSet"]:
        if not value:
            caps = set()  # an empty assignment resets the list
        elif value.startswith("~"):
            raise AssertionError("CapabilityBoundingSet=%s: a deny list cannot be mirrored as an add list" % value)
        else:
            caps |= {c.removeprefix("CAP_") for c in value.split()}
    return caps


def systemd_bytes(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    number, suffix = re.fullmatch(r"(\d+)([KMGT]?)", text).groups()
    return int(number) * units[suffix]


def kubernetes_bytes(text):
    units = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    number, suffix = re.fullmatch(r"(\d+)(k|M|G|Ki|Mi|Gi|)", str(text)).groups()
    return int(number) * units[suffix]


def project_version():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        return re.search(r"project\(memdiag VERSION (\S+)", f.read()).group(1)


class Manifest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(MANIFEST) as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        cls.kinds = sorted(d["kind"] for d in docs)
        cls.by_kind = {d["kind"]: d for d in docs}
        ds = cls.by_kind["DaemonSet"]
        cls.pod = ds["spec"]["template"]["spec"]
        assert len(cls.pod["containers"]) == 1, "one container, memdiagd"
        cls.container = cls.pod["containers"][0]
        volumes = {v["name"]: v for v in cls.pod["volumes"]}
        # host path -> (mount path in the container, read-only)
        cls.host_mounts = {volumes[m["name"]]["hostPath"]["path"]: (m["mountPath"], m.get("readOnly", False))
                           for m in cls.container["volumeMounts"] if "hostPath" in volumes[m["name"]]}
        cls.config_map = cls.by_kind["ConfigMap"]
        (cls.config_key, config_text), = cls.config_map["data"].items()
        cls.config = yaml.safe_load(config_text)

    def port(self):
        (port,) = self.container["ports"]
        return port

    def test_every_kind_once_all_in_the_namespace(self):
        self.assertEqual(self.kinds, KINDS)
        namespace = self.by_kind["Namespace"]["metadata"]["name"]
        for kind in set(KINDS) - {"Namespace", "PriorityClass"}:
            self.assertEqual(self.by_kind[kind]["metadata"]["namespace"], namespace, kind)
        self.assertEqual(self.by_kind["ServiceMonitor"]["apiVersion"], "monitoring.coreos.com/v1")

    def test_host_pid_namespace_and_read_only_host_mounts(self):
        self.assertIs(self.pod["hostPID"], True)
        for host_path in ("/proc", "/sys", "/sys/fs/bpf"):
            self.assertIn(host_path, self.host_mounts)
            self.assertIs(self.host_mounts[host_path][1], True, host_path + " must be read-only")
        # Of the host, only cgroupfs is writable, and it holds all the unit may write.
        writable = {path for path, (_, read_only) in self.host_mounts.items() if not read_only}
        self.assertEqual(writable, {"/sys/fs/cgroup"})
        for value in unit_service_directives()["ReadWritePaths"]:
            for path in value.split():
                self.assertTrue(path.lstrip("-+").startswith("/sys/fs/cgroup"), path)
        # The daemon reads the host's procfs and sysfs where they are mounted.
        self.assertEqual(self.config["paths"]["procfs"], self.host_mounts["/proc"][0])
        self.assertEqual(self.config["paths"]["sysfs"], self.host_mounts["/sys"][0])

    def test_the_units_capabilities_instead_of_privileged(self):
        for c in self.pod["containers"] + self.pod.get("initContainers", []):
            self.assertIsNot(c.get("securityContext", {}).get("privileged"), True, c["name"])
        sc = self.container["securityContext"]
        self.assertIs(sc["privileged"], False)
        self.assertIs(sc["allowPrivilegeEscalation"], False)
        self.assertIs(sc["readOnlyRootFilesystem"], True)
        self.assertEqual(sc["runAsUser"], 0)
        self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
        added = {c.removeprefix("CAP_") for c in sc["capabilities"]["add"]}
        self.assertEqual(added, unit_capabilities())

    def test_guaranteed_resources_within_the_units_memory_max(self):
        resources = self.container["resources"]
        for kind in ("requests", "limits"):
            self.assertEqual(sorted(resources[kind]), ["cpu", "memory"], kind)
        self.assertEqual(resources["requests"], resources["limits"], "Guaranteed QoS: requests equal limits")
        memory_max = systemd_bytes(unit_service_directives()["MemoryMax"][0])
        self.assertLessEqual(kubernetes_bytes(resources["limits"]["memory"]), memory_max)

    def test_scheduled_everywhere_above_workloads(self):
        pc = self.by_kind["PriorityClass"]
        self.assertEqual(self.pod["priorityClassName"], pc["metadata"]["name"])
        self.assertFalse(pc["metadata"]["name"].startswith("system-"), "system- names are reserved")
        self.assertEqual(pc["value"], 10**9, "the highest value a non-system class may have")
        self.assertIs(pc.get("globalDefault", False), False)
        self.assertIn(pc["preemptionPolicy"], ("PreemptLowerPriority", "Never"))
        self.assertGreater(len(pc["description"]), 40)
        self.assertIn({"operator": "Exists"}, self.pod["tolerations"])
        self.assertEqual(self.pod["serviceAccountName"], self.by_kind["ServiceAccount"]["metadata"]["name"])
        ds = self.by_kind["DaemonSet"]["spec"]
        self.assertEqual(ds["updateStrategy"]["type"], "RollingUpdate")
        self.assertIn("maxUnavailable", ds["updateStrategy"]["rollingUpdate"])
        self.assertGreater(self.pod["terminationGracePeriodSeconds"], 3)
        labels = ds["template"]["metadata"]["labels"]
        self.assertLessEqual(ds["selector"]["matchLabels"].items(), labels.items())

    def test_probes_on_healthz(self):
        for probe in ("livenessProbe", "readinessProbe"):
            get = self.container[probe]["httpGet"]
            self.assertEqual(get["path"], "/healthz", probe)
            self.assertIn(get["port"], (self.port()["name"], self.port()["containerPort"]), probe)

    def test_one_port_everywhere_and_the_config_file_is_the_config_map(self):
        port = self.port()["containerPort"]
        annotations = self.by_kind["DaemonSet"]["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(annotations["prometheus.io/scrape"], "true")
        self.assertEqual(annotations["prometheus.io/port"], str(port))
        (service_port,) = self.by_kind["Service"]["spec"]["ports"]
        self.assertEqual(service_port["port"], port)
        self.assertIn(service_port["targetPort"], (port, self.port()["name"]))
        self.assertEqual(self.config["web"]["listen_address"], "0.0.0.0:%d" % port)
        (mount,) = [m for m in self.container["volumeMounts"]
                    if {"name": m["name"], "configMap": {"name": self.config_map["metadata"]["name"]}}
                    in self.pod["volumes"]]
        command = self.container["command"]
        self.assertEqual(command[command.index("--config") + 1], mount["mountPath"] + "/" + self.config_key)
        self.assertEqual(self.container["image"].rsplit(":", 1)[1], project_version())

    def test_service_monitor_finds_the_service_and_names_the_node_as_instance(self):
        service = self.by_kind["Service"]
        self.assertEqual(service["spec"]["clusterIP"], "None")
        pod_labels = self.by_kind["DaemonSet"]["spec"]["template"]["metadata"]["labels"]
        self.assertLessEqual(service["spec"]["selector"].items(), pod_labels.items())
        monitor = self.by_kind["ServiceMonitor"]["spec"]
        self.assertLessEqual(monitor["selector"]["matchLabels"].items(), service["metadata"]["labels"].items())
        self.assertEqual(monitor["namespaceSelector"]["matchNames"], [service["metadata"]["namespace"]])
        (endpoint,) = monitor["endpoints"]
        self.assertEqual(endpoint["port"], service["spec"]["ports"][0]["name"])
        self.assertIn({"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "instance",
                       "action": "replace"}, endpoint["relabelings"])

    def check_config(self, config):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            yaml.safe_dump(config, f)
            f.flush()
            p = subprocess.run([MEMDIAGD, "--check-config", "--config", f.name], capture_output=True, text=True,
                               timeout=30)
        return p.returncode, p.stdout + p.stderr

    def test_the_config_map_keeps_the_series_budget_of_the_defaults(self):
        """Every cap that bounds how many series a node exports is at most its default
        (deploy/memdiagd.yaml), which keeps a 2,000-cgroup node under 3,000 series."""
        with open(os.path.join(REPO, "deploy", "memdiagd.yaml")) as f:
            defaults = yaml.safe_load(f)
        caps = [("sources", "cgroup", "max_cgroups"), ("sources", "cgroup", "max_watched"),
                ("sources", "reclaim_stall", "max_cgroups"), ("sources", "processes", "top_n"),
                ("sources", "processes", "max_above_threshold"), ("sources", "processes", "max_cgroups"),
                ("diagnosis", "breaking", "max_items"), ("diagnosis", "roles", "max_members")]

        def lookup(config, path):
            for key in path:
                config = (config or {}).get(key)
            return config
        for path in caps:
            with self.subTest(key=".".join(path)):
                default = lookup(defaults, path)
                self.assertIsNotNone(default, "deploy/memdiagd.yaml has no %s" % ".".join(path))
                value = lookup(self.config, path)
                self.assertLessEqual(default if value is None else value, default)

    def test_the_daemon_accepts_the_config_maps_config(self):
        # Only what differs here from in a pod: this host's paths, a free loopback port.
        config = yaml.safe_load(yaml.safe_dump(self.config))
        config["paths"] = {"procfs": "/proc", "sysfs": "/sys"}
        config["web"]["listen_address"] = "127.0.0.1:%d" % free_port()
        rc, out = self.check_config(config)
        self.assertEqual(rc, 0, out)
        # The check can fail: a key the daemon does not know is refused.
        config["sources"]["cgroup"]["max_dept"] = 6
        rc, out = self.check_config(config)
        self.assertEqual(rc, 2, out)
        self.assertIn("sources.cgroup.max_dept", out)


if __name__ == "__main__":
    unittest.main()
