# SPDX-License-Identifier: Apache-2.0
"""What an exposition of a fixture tree must contain, worked out from the fixture files alone.

The golden files (tests/fixtures/*.prom) are what memdiagd printed when they were last
regenerated: diffing against them catches a change, not a mistake that was there when they were
written. This module is the second opinion. It reads the fixture's kernel files with its own
small parsers and applies the export contract as docs/sources.md and docs/development.md
("Metric naming") state it: the family name, the unit conversion (kB -> bytes, PSI microseconds
-> seconds, PSI percentages -> ratios), which vmstat fields are counters. It imports nothing of
memdiagd and was not written from its output, so a wrong name, unit or value in the daemon
disagrees with it.

expected_*() return {(metric name, frozenset of label pairs): value}; compare() holds an
exposition to them in both directions: every expected sample present with its value, and no
sample of the families checked that the fixture does not account for."""
import math
import os
import re

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def key(metric, **labels):
    return (metric, frozenset(labels.items()))


def parse_samples(text):
    """{(name, frozenset(labels)): float} of every sample line; label values unescaped."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise AssertionError("unparseable exposition line: %r" % line)
        labels, rest = {}, m.group(2) or ""
        while rest:
            lm = _LABEL.match(rest)
            if not lm:
                raise AssertionError("unparseable labels in %r" % line)
            labels[lm.group(1)] = re.sub(r'\\(.)', lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), lm.group(2))
            rest = rest[lm.end():]
        k = (m.group(1), frozenset(labels.items()))
        if k in samples:
            raise AssertionError("sample exported twice: %r" % line)
        samples[k] = float(m.group(3))
    return samples


def compare(exposition, expected, owns):
    """Differences between the samples of `exposition` that `owns(name)` claims and `expected`,
    as readable lines (empty: they agree)."""
    got = {k: v for k, v in parse_samples(exposition).items() if owns(k[0])}
    problems = []
    for k in sorted(expected, key=repr):
        if k not in got:
            problems.append("missing: %s" % _show(k, expected[k]))
        elif not math.isclose(got[k], expected[k], rel_tol=1e-9, abs_tol=1e-12):
            problems.append("wrong value: %s, exported %r" % (_show(k, expected[k]), got[k]))
    for k in sorted(got, key=repr):
        if k not in expected:
            problems.append("not in the fixture: %s" % _show(k, got[k]))
    return problems


def _show(k, value):
    return "%s{%s} %r" % (k[0], ",".join('%s="%s"' % kv for kv in sorted(k[1])), value)


def _read(path):
    with open(path) as f:
        return f.read()


# --- node files -----------------------------------------------------------------------------

# docs/sources.md: "Words promtool reads as units are spelled out".
_MEMINFO_SPELLED_OUT = {"SReclaimable": "slab_reclaimable", "SUnreclaim": "slab_unreclaim",
                        "SecPageTables": "secondary_page_tables"}


def meminfo_snake(field):
    """docs/sources.md's snake case of a kernel meminfo name: MemTotal -> mem_total, Active(anon) ->
    active_anon, Committed_AS -> committed_as, DirectMap2M -> direct_map_2m."""
    if field in _MEMINFO_SPELLED_OUT:
        return _MEMINFO_SPELLED_OUT[field]
    s = field.replace("(", "_").replace(")", "")
    s = re.sub(r'([a-z])([A-Z])', r'\1_\2', s)        # wordWord
    s = re.sub(r'([A-Z])([A-Z][a-z])', r'\1_\2', s)   # ACRONYMWord
    s = re.sub(r'([A-Za-z])([0-9])', r'\1_\2', s)     # word2M
    return re.sub(r'_+', '_', s).lower()


def expected_meminfo(procfs):
    """Every /proc/meminfo field: kB fields as memdiag_meminfo_<field>_bytes (x 1024), the
    unit-less HugePages_* counts as memdiag_meminfo_<field>_pages."""
    out = {}
    for line in _read(os.path.join(procfs, "meminfo")).splitlines():
        name, rest = line.split(":", 1)
        words = rest.split()
        if len(words) == 2 and words[1] == "kB":
            out[key("memdiag_meminfo_%s_bytes" % meminfo_snake(name))] = int(words[0]) * 1024
        elif len(words) == 1:
            out[key("memdiag_meminfo_%s_pages" % meminfo_snake(name))] = int(words[0])
        else:
            raise AssertionError("fixture meminfo line the contract does not cover: %r" % line)
    return out


# docs/sources.md: the nr_* fields that count events rather than hold a level.
_VMSTAT_CUMULATIVE_NR = ("nr_dirtied", "nr_written", "nr_throttled_written", "nr_foll_pin_acquired",
                         "nr_foll_pin_released")


def vmstat_is_level(field):
    """docs/sources.md: levels as gauges (nr_*, workingset_nodes); the cumulative nr_* fields
    (nr_dirtied, ..., nr_vmscan_*, nr_tlb_*) are counters like every other field."""
    if field in _VMSTAT_CUMULATIVE_NR or field.startswith(("nr_vmscan_", "nr_tlb_")):
        return False
    return field.startswith("nr_") or field == "workingset_nodes"


def vmstat_name(field):
    """docs/sources.md: the word "sec" (which promtool reads as a unit) spelled out."""
    return "_".join("secondary" if word == "sec" else word for word in field.split("_"))


def expected_vmstat(procfs):
    out = {}
    for line in _read(os.path.join(procfs, "vmstat")).splitlines():
        field, value = line.split()
        field = vmstat_name(field)
        name = "memdiag_vmstat_%s" % field if vmstat_is_level(field) else "memdiag_vmstat_%s_total" % field
        out[key(name)] = int(value)
    return out


def _psi_lines(text):
    """{kind: {"avg10": .., "avg60": .., "avg300": .., "total": ..}} of a PSI file."""
    out = {}
    for line in text.splitlines():
        kind, *pairs = line.split()
        out[kind] = {k: float(v) for k, v in (p.split("=") for p in pairs)}
        if sorted(out[kind]) != ["avg10", "avg300", "avg60", "total"]:
            raise ValueError(line)
    return out


def _psi_samples(text, stall_name, ratio_name, **labels):
    out = {}
    for kind, values in _psi_lines(text).items():
        out[key(stall_name, kind=kind, **labels)] = values["total"] / 1e6       # microseconds
        for window in ("10", "60", "300"):                                        # percent
            out[key(ratio_name, kind=kind, window=window + "s", **labels)] = values["avg" + window] / 100
    return out


def expected_pressure(procfs):
    out = {}
    directory = os.path.join(procfs, "pressure")
    if not os.path.isdir(directory):
        return out
    for resource in sorted(os.listdir(directory)):
        out.update(_psi_samples(_read(os.path.join(directory, resource)), "memdiag_pressure_stall_seconds_total",
                                "memdiag_pressure_ratio", resource=resource))
    return out


def expected_vm_sysctl(procfs):
    """memdiag_vm_sysctl{name} for every vm sysctl file of the tree."""
    directory = os.path.join(procfs, "sys", "vm")
    return {key("memdiag_vm_sysctl", name=n): int(_read(os.path.join(directory, n)))
            for n in sorted(os.listdir(directory))}


def _status_fields(text):
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        out[name] = value.strip()
    return out


def _kb(value):
    number, unit = value.split()
    assert unit == "kB", value
    return int(number) * 1024


def _meminfo_bytes(procfs):
    kb = {}
    for line in _read(os.path.join(procfs, "meminfo")).splitlines():
        name, rest = line.split(":", 1)
        words = rest.split()
        if len(words) == 2:
            kb[name] = int(words[0]) * 1024
    return kb


def _node_unbacked(kb):
    return max(0, kb["Committed_AS"] - kb["AnonPages"] - kb["Shmem"] - max(0, kb["SwapTotal"] - kb["SwapFree"]))


def _promises(procfs):
    """(committed, unbacked, rss_anon, uncharged) per process with memory. docs/verdicts.md "Overcommit
    risk": a process whose private size exceeds the node's Committed_AS, or whose unbacked part
    exceeds the node's unbacked promise, holds reservations the kernel never charged."""
    kb = _meminfo_bytes(procfs)
    out = {}
    for pid in sorted(p for p in os.listdir(procfs) if p.isdigit()):
        status = _status_fields(_read(os.path.join(procfs, pid, "status")))
        if "VmSize" not in status:
            continue
        committed = _kb(status["VmData"]) + _kb(status["VmStk"])
        unbacked = max(0, committed - _kb(status["RssAnon"]) - _kb(status["VmSwap"]))
        uncharged = committed > kb["Committed_AS"] or unbacked > _node_unbacked(kb)
        out[pid] = (committed, unbacked, _kb(status["RssAnon"]), uncharged)
    return out


def expected_processes(procfs, threshold):
    """The per-process families for a tree with fewer processes than top_n (every process with
    memory is exported), with `map_areas_threshold` = threshold. A process without VmSize in its
    status is a kernel thread: no memory, nothing to export. Map areas are the kernel's
    mm->map_count, which vm.max_map_count limits: the lines of maps, less the [vsyscall] gate
    area that maps shows but that is no VMA of the process. The promise a process holds (docs/verdicts.md):
    committed private = VmData + VmStk; unbacked = that less RssAnon and VmSwap, never below 0;
    the node-wide figure sums the unbacked over every process with memory."""
    max_map_count = int(_read(os.path.join(procfs, "sys", "vm", "max_map_count")))
    out, ratios = {}, {}
    unbacked_total = 0
    promises = _promises(procfs)
    for pid in sorted(p for p in os.listdir(procfs) if p.isdigit()):
        status = _status_fields(_read(os.path.join(procfs, pid, "status")))
        if "VmSize" not in status:
            continue
        areas = sum(1 for line in _read(os.path.join(procfs, pid, "maps")).splitlines()
                    if not line.endswith("[vsyscall]"))
        who = {"pid": pid, "comm": status["Name"]}
        out[key("memdiag_process_map_areas", **who)] = areas
        for kind, field in (("anon", "RssAnon"), ("file", "RssFile"), ("shmem", "RssShmem")):
            out[key("memdiag_process_resident_bytes", type=kind, **who)] = _kb(status[field])
        out[key("memdiag_process_swap_bytes", **who)] = _kb(status["VmSwap"])
        out[key("memdiag_process_virtual_bytes", **who)] = _kb(status["VmSize"])
        committed = _kb(status["VmData"]) + _kb(status["VmStk"])
        unbacked = max(0, committed - _kb(status["RssAnon"]) - _kb(status["VmSwap"]))
        out[key("memdiag_process_committed_private_bytes", **who)] = committed
        out[key("memdiag_process_unbacked_promise_bytes", **who)] = unbacked
        if not promises[pid][3]:  # uncharged reservations are no promise
            unbacked_total += unbacked
        ratios[pid, status["Name"]] = areas / max_map_count
    above = {who: r for who, r in ratios.items() if r >= threshold}
    for (pid, comm), r in above.items():
        out[key("memdiag_process_map_areas_above_threshold", pid=pid, comm=comm)] = r
    out[key("memdiag_map_areas_ratio_max")] = max(ratios.values(), default=0)
    out[key("memdiag_processes_above_map_areas_threshold")] = len(above)
    out[key("memdiag_process_map_areas_threshold_ratio")] = threshold
    out[key("memdiag_processes")] = len(ratios)
    out[key("memdiag_processes_unbacked_promise_bytes")] = unbacked_total
    return out


PROCESS_FAMILIES = ("memdiag_process_map_areas", "memdiag_process_resident_bytes", "memdiag_process_swap_bytes",
                    "memdiag_process_virtual_bytes", "memdiag_process_map_areas_above_threshold",
                    "memdiag_map_areas_ratio_max", "memdiag_processes_above_map_areas_threshold",
                    "memdiag_process_map_areas_threshold_ratio", "memdiag_processes",
                    "memdiag_process_committed_private_bytes", "memdiag_process_unbacked_promise_bytes",
                    "memdiag_processes_unbacked_promise_bytes")


# docs/verdicts.md "Overcommit risk": the figures from meminfo, the mode from vm.overcommit_memory, and
# the default thresholds of the levels low, medium, high, critical.
_UNBACKED_TO_SUPPLY = (0.5, 1.0, 2.0, 4.0)
_COMMIT_LIMIT_RATIO = (0.85, 0.90, 0.95, 0.98)
_LEVELS = ("none", "low", "medium", "high", "critical")
_OVERCOMMIT_REASONS = ("unbacked_promises", "commit_limit", "cgroup_limits", "overcommit_always")
_MODES = {0: "heuristic", 1: "always", 2: "never"}


def _level(value, bounds):
    return sum(1 for b in bounds if value >= b)


def expected_overcommit(procfs):
    """The memdiag_overcommit_* families of a tree without cgroups (nothing capped by limits):
    unbacked = Committed_AS - AnonPages - Shmem - (SwapTotal - SwapFree), at least 0; of it the
    copy-on-write sharing, RssAnon summed over the processes less AnonPages, at least 0; charged =
    unbacked less that, at least 0; supply = MemAvailable + SwapFree; the ratios (on the charged
    figure); the uncharged reservations; the level of the mode's rule, as a number, a state set
    and reasons."""
    kb = _meminfo_bytes(procfs)
    promises = _promises(procfs)
    mode = _MODES[int(_read(os.path.join(procfs, "sys", "vm", "overcommit_memory")))]
    charge, limit = kb["Committed_AS"], kb["CommitLimit"]
    swap_used = max(0, kb["SwapTotal"] - kb["SwapFree"])
    unbacked = max(0, charge - kb["AnonPages"] - kb["Shmem"] - swap_used)
    supply = kb["MemAvailable"] + kb["SwapFree"]
    rss_anon = sum(p[2] for p in promises.values())
    cow = max(0, rss_anon - kb["AnonPages"]) if rss_anon > 0 else None
    charged = max(0, unbacked - (cow or 0))
    uncharged = [p for p in promises.values() if p[3]]
    out = {key("memdiag_overcommit_unbacked_bytes"): unbacked,
           key("memdiag_overcommit_charged_unbacked_bytes"): charged,
           key("memdiag_overcommit_capped_by_limits_bytes"): 0,
           key("memdiag_overcommit_uncharged_reservation_bytes"): sum(p[0] for p in uncharged),
           key("memdiag_overcommit_uncharged_reservation_processes"): len(uncharged),
           key("memdiag_overcommit_cgroups_over_limit"): 0,
           key("memdiag_overcommit_supply_bytes"): supply,
           key("memdiag_overcommit_unbacked_to_supply_ratio"): charged / supply,
           key("memdiag_overcommit_commit_limit_ratio"): charge / limit,
           key("memdiag_overcommit_commit_ratio"): charge / (kb["MemTotal"] + kb["SwapTotal"]),
           key("memdiag_overcommit_mode_info", mode=mode, assumed="false"): 1}
    if cow is not None:
        out[key("memdiag_overcommit_cow_shared_bytes")] = cow
    reasons = set()
    if mode == "never":
        level = _level(charge / limit, _COMMIT_LIMIT_RATIO[:3])
        if limit - charge < 100 << 20 or charge / limit >= _COMMIT_LIMIT_RATIO[3]:
            level = 4
        if level:
            reasons.add("commit_limit")
    else:
        level = _level(charged / supply, _UNBACKED_TO_SUPPLY)
        if level:
            reasons.add("unbacked_promises")
        if mode == "always" and charged / supply >= _UNBACKED_TO_SUPPLY[1]:
            reasons.add("overcommit_always")
    out[key("memdiag_overcommit_risk_level")] = level
    for i, name in enumerate(_LEVELS):
        out[key("memdiag_overcommit_risk_state", level=name)] = int(i == level)
    for reason in _OVERCOMMIT_REASONS:
        out[key("memdiag_overcommit_risk_reason", reason=reason)] = int(reason in reasons)
    return out


_STALL_REASONS = ("stall_time", "direct_reclaim", "memcg_limit", "compaction", "thrashing", "reclaim_inefficient", "oom_kill",
                  "swap_exhausted", "slow_faults", "hard_faults", "low_memory")


def expected_stall_first_sample(procfs):
    """docs/verdicts.md "Stall verdict": a first sample (what --once prints) has no window (0 s), so no
    rates, no evidence, no reasons and level none; the signals are the sources the tree has (no
    eBPF in a tree). A fixture without swap has no swap_free_ratio evidence either."""
    out = {key("memdiag_stall_level"): 0}
    for i, name in enumerate(_LEVELS):
        out[key("memdiag_stall_state", level=name)] = int(i == 0)
    for reason in _STALL_REASONS:
        out[key("memdiag_stall_reason", reason=reason)] = 0
    has = {"psi": os.path.isfile(os.path.join(procfs, "pressure", "memory")),
           "vmstat": os.path.isfile(os.path.join(procfs, "vmstat")),
           "ebpf": False,
           "meminfo": os.path.isfile(os.path.join(procfs, "meminfo")),
           "canary": False,  # the goldens' configs turn the canary off: it measures this machine
           "paging": False, "low_memory": False}  # Windows's signals
    for signal, present in has.items():
        out[key("memdiag_stall_signal", signal=signal)] = int(present)
    out[key("memdiag_stall_window_seconds")] = 0
    return out


_HEADROOM_RATIO = 0.10  # docs/diagnosis.md "Who presses": diagnosis.roles.headroom_ratio


def expected_shortfall(procfs):
    """docs/diagnosis.md: the node's shortfall is what MemAvailable lacks of 10 % of MemTotal."""
    mem = expected_meminfo(procfs)
    total = mem.get(key("memdiag_meminfo_mem_total_bytes"))
    available = mem.get(key("memdiag_meminfo_mem_available_bytes"))
    if total is None or available is None:
        return {}
    return {key("memdiag_shortfall_bytes"): round(max(0.0, _HEADROOM_RATIO * total - available))}


def node_families(name):
    return (name.startswith(("memdiag_meminfo_", "memdiag_vmstat_", "memdiag_pressure_", "memdiag_overcommit_",
                             "memdiag_stall_"))
            or name in ("memdiag_vm_sysctl", "memdiag_shortfall_bytes") or name in PROCESS_FAMILIES)


def expected_node(procfs, process_threshold):
    out = {}
    for part in (expected_meminfo, expected_vmstat, expected_pressure, expected_vm_sysctl, expected_overcommit,
                 expected_stall_first_sample, expected_shortfall):
        out.update(part(procfs))
    out.update(expected_processes(procfs, process_threshold))
    return out


# --- cgroup v2 tree -------------------------------------------------------------------------

_UUID = r'[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}'


def kubernetes_identity(path):
    """Labels a cgroup path gives away, by the kubelet's two cgroup drivers:
      systemd:  /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid, _ for ->.slice/<runtime>-<id>.scope
      cgroupfs: /kubepods/<qos>/pod<uid>/<id>
    A pod directly under kubepods (no qos level) is Guaranteed; the qos level's own cgroup has
    its qos_class. Other systemd units (the last component ending in .service, .scope, .slice)
    are named by `unit`."""
    parts = [p for p in path.split("/") if p]
    labels = {}
    if parts and parts[0] in ("kubepods.slice", "kubepods"):
        if len(parts) >= 2:
            qos = re.fullmatch(r'(?:kubepods-)?(besteffort|burstable)(?:\.slice)?', parts[1])
            if qos:
                labels["qos_class"] = qos.group(1)
        for i, part in enumerate(parts):
            systemd = re.fullmatch(r'kubepods(?:-(besteffort|burstable))?-pod(%s)\.slice' % _UUID, part)
            cgroupfs = re.fullmatch(r'pod(%s)' % _UUID, part)
            if systemd:
                qos, uid = systemd.group(1), systemd.group(2)
            elif cgroupfs:
                qos, uid = parts[i - 1] if parts[i - 1] in ("besteffort", "burstable") else None, cgroupfs.group(1)
            else:
                continue
            labels["pod_uid"] = uid.replace("_", "-")
            labels["qos_class"] = qos or "guaranteed"
            if i + 1 < len(parts):
                c = re.fullmatch(r'(?:[a-z-]+-)?([0-9a-f]{64})(?:\.scope)?', parts[i + 1])
                if c:
                    labels["container_id"] = c.group(1)
            break
        return labels
    if parts and re.search(r'\.(service|scope|slice)$', parts[-1]):
        labels["unit"] = parts[-1]
    return labels


_U64_MAX = 2 ** 64 - 1


def _u64(text):
    """A kernel counter: ValueError unless a decimal that fits 64 bits."""
    if not re.fullmatch(r'[0-9]+', text):
        raise ValueError(text)
    value = int(text)
    if value > _U64_MAX:
        raise ValueError(text)
    return value


def _number_or_max(text):
    text = text.strip()
    return None if text == "max" else _u64(text)


def _flat_keyed(text):
    """A "key value" file; ValueError on a bad number or a key twice (the kernel never does)."""
    out = {}
    for line in text.splitlines():
        k, v = line.split()
        if k in out:
            raise ValueError(line)
        out[k] = _u64(v)
    return out


# docs/sources.md: the memory.stat keys exported, sizes and event counts.
_STAT_BYTES = ("anon", "file", "inactive_file", "kernel", "kernel_stack", "pagetables", "sock", "shmem", "file_mapped",
               "file_dirty", "file_writeback", "slab_reclaimable", "slab_unreclaimable")
_STAT_EVENTS = ("workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
                "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file", "pgscan", "pgsteal",
                "pgscan_direct", "pgsteal_direct", "pgscan_kswapd", "pgsteal_kswapd", "pgfault", "pgmajfault")


def expected_cgroup_v2(tree, max_depth):
    """Every cgroup of tree/sys/fs/cgroup within max_depth, for a tree with fewer cgroups than
    max_cgroups, and the node-wide figures. A file that does not parse (docs/sources.md: counted in
    memdiag_cgroup_malformed_files) gives no series; the cgroup's other files still do, and a
    leaf whose limit cannot be read counts as unlimited."""
    root = os.path.join(tree, "sys", "fs", "cgroup")
    mem_total = expected_meminfo(os.path.join(tree, "proc"))[key("memdiag_meminfo_mem_total_bytes")]
    out, malformed, discovered = {}, 0, 0
    leaf_limits, leaves = 0, {"true": 0, "false": 0}
    limits = {}  # every discovered cgroup: its hard limit or None
    ranked = []
    for directory, subdirs, files in sorted(os.walk(root)):
        rel = "/" + os.path.relpath(directory, root) if directory != root else "/"
        if rel != "/" and rel.count("/") > max_depth:
            subdirs[:] = []
            continue
        discovered += 1
        samples, limit, bad = _cgroup_samples(directory, rel, files)
        limits[rel] = limit
        ranked.append((_importance(samples, rel), rel))
        out.update(samples)
        malformed += bad
        if rel != "/" and not subdirs:
            leaves["true" if limit is not None else "false"] += 1
            leaf_limits += limit or 0
    # docs/operations.md "Series per node": memory.stat keys and PSI averages only for the cgroups that
    # matter now: the 10 most important (memory PSI some avg10, then fill, then usage, then path)
    # and any within 10 % of its limit (none stalls or has a role in a first sample).
    ranked.sort()
    detailed = {rel for _, rel in ranked[:10]}
    detailed |= {rel for (_, negative_fill, _, _), rel in ranked if -negative_fill >= 0.9}
    for k in [k for k in out if k[0] in _DETAIL and dict(k[1])["cgroup"] not in detailed]:
        del out[k]
    out[key("memdiag_cgroups_discovered", mode="v2")] = discovered
    out[key("memdiag_cgroup_malformed_files")] = malformed
    out[key("memdiag_cgroup_leaf_limits_sum_bytes")] = leaf_limits
    for limited, n in leaves.items():
        out[key("memdiag_cgroup_leaves", limited=limited)] = n
    effective = _limits_as_they_bind(limits)
    out[key("memdiag_cgroup_effective_limits_sum_bytes")] = effective
    out[key("memdiag_cgroup_limit_overcommit_ratio")] = effective / mem_total
    return out


def _limits_as_they_bind(limits):
    """docs/verdicts.md "Overcommit risk": a limited cgroup counts the lower of its limit and what its
    children count, a limited leaf its limit, an unlimited leaf under a limit as much as that
    limit allows (unbounded, then capped above), elsewhere nothing."""
    children = {path: [] for path in limits}
    for path in limits:
        if path != "/":
            children[path.rsplit("/", 1)[0] or "/"].append(path)

    def counted(path, under_limit):
        limit = limits[path]
        under = under_limit or limit is not None
        if children[path]:
            total = sum(counted(child, under) for child in children[path])
        else:
            total = float("inf") if under else 0
        return total if limit is None else min(total, limit)
    return counted("/", False)


_DETAIL = ("memdiag_cgroup_memory_stat_bytes", "memdiag_cgroup_memory_stat_events_total", "memdiag_cgroup_pressure_ratio")


def _importance(samples, path):
    """A sort key putting the daemon's most important cgroups first: highest memory PSI some
    avg10, then fullest (usage over the hard limit), then largest, then by path."""
    def value(family, **extra):
        return samples.get(key(family, cgroup=path, **{**kubernetes_identity(path), **extra}), 0)
    psi = value("memdiag_cgroup_pressure_ratio", kind="some", window="10s")
    usage = value("memdiag_cgroup_memory_usage_bytes")
    limit = value("memdiag_cgroup_memory_limit_bytes")
    fill = usage / limit if limit else 0
    return (-psi, -fill, -usage, path)


def _cgroup_samples(directory, path, files):
    """(samples, limit or None, how many of its files did not parse) of one cgroup."""
    labels = {"cgroup": path, **kubernetes_identity(path)}
    parsed, bad = {}, 0
    for name, parse in (("memory.current", _number_or_max), ("memory.max", _number_or_max),
                        ("memory.high", _number_or_max), ("memory.low", _number_or_max),
                        ("memory.swap.current", _number_or_max), ("memory.events", _flat_keyed),
                        ("memory.stat", _flat_keyed), ("memory.pressure", _psi_lines)):
        if name in files:
            try:
                parsed[name] = parse(_read(os.path.join(directory, name)))
            except ValueError:
                bad += 1
    out = {}
    usage, limit = parsed.get("memory.current"), parsed.get("memory.max")
    if usage is not None:
        out[key("memdiag_cgroup_memory_usage_bytes", **labels)] = usage
    if limit is not None:
        out[key("memdiag_cgroup_memory_limit_bytes", **labels)] = limit
        if usage is not None:
            out[key("memdiag_cgroup_memory_headroom_bytes", **labels)] = max(limit - usage, 0)
            out[key("memdiag_cgroup_memory_fill_ratio", **labels)] = usage / limit
    for name, family in (("memory.high", "memdiag_cgroup_memory_high_bytes"),
                         ("memory.low", "memdiag_cgroup_memory_low_bytes"),
                         ("memory.swap.current", "memdiag_cgroup_swap_usage_bytes")):
        if parsed.get(name) is not None:
            out[key(family, **labels)] = parsed[name]
    for event, n in parsed.get("memory.events", {}).items():
        out[key("memdiag_cgroup_memory_events_total", event=event, **labels)] = n
    for stat_key, n in parsed.get("memory.stat", {}).items():
        if stat_key in _STAT_BYTES:
            out[key("memdiag_cgroup_memory_stat_bytes", key=stat_key, **labels)] = n
        elif stat_key in _STAT_EVENTS:
            out[key("memdiag_cgroup_memory_stat_events_total", key=stat_key, **labels)] = n
    # docs/verdicts.md "Cgroups as scopes of their own": a cgroup with a limit (the lower of memory.max
    # and memory.high) is judged; a first sample has no window, so its level is none. What it
    # can supply is the limit less its working set (usage less inactive_file).
    sizes = [v for v in (limit, parsed.get("memory.high")) if v is not None]
    if sizes and usage is not None:
        size = min(sizes)
        working_set = max(usage - parsed.get("memory.stat", {}).get("inactive_file", 0), 0)
        available = max(size - working_set, 0)
        out[key("memdiag_cgroup_stall_level", **labels)] = 0
        out[key("memdiag_cgroup_available_bytes", **labels)] = available
        out[key("memdiag_cgroup_shortfall_bytes", **labels)] = round(max(0.0, _HEADROOM_RATIO * size - available))
    for kind, values in parsed.get("memory.pressure", {}).items():
        out[key("memdiag_cgroup_pressure_stall_seconds_total", kind=kind, **labels)] = values["total"] / 1e6
        for window in ("10", "60", "300"):
            out[key("memdiag_cgroup_pressure_ratio", kind=kind, window=window + "s", **labels)] = \
                values["avg" + window] / 100
    return out, limit, bad


CGROUP_PER_PATH = ("memdiag_cgroup_memory_usage_bytes", "memdiag_cgroup_memory_limit_bytes",
                   "memdiag_cgroup_memory_headroom_bytes", "memdiag_cgroup_memory_fill_ratio",
                   "memdiag_cgroup_memory_high_bytes", "memdiag_cgroup_memory_low_bytes",
                   "memdiag_cgroup_swap_usage_bytes", "memdiag_cgroup_memory_events_total",
                   "memdiag_cgroup_memory_stat_bytes", "memdiag_cgroup_memory_stat_events_total",
                   "memdiag_cgroup_pressure_stall_seconds_total", "memdiag_cgroup_pressure_ratio",
                   "memdiag_cgroup_stall_level", "memdiag_cgroup_available_bytes", "memdiag_cgroup_shortfall_bytes")
CGROUP_NODE = ("memdiag_cgroups_discovered", "memdiag_cgroup_malformed_files", "memdiag_cgroup_leaf_limits_sum_bytes",
               "memdiag_cgroup_leaves", "memdiag_cgroup_effective_limits_sum_bytes",
               "memdiag_cgroup_limit_overcommit_ratio")


def cgroup_families(name):
    return name in CGROUP_PER_PATH or name in CGROUP_NODE
