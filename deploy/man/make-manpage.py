#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes memdiagd(8) from the daemon's own --help texts (`memdiagd --help`, `memdiagd diagnose
--help`, `memdiagd record --help`), so the man page and the help cannot say different things;
the sections --help has no room for (endpoints, signals, files, exit status) are written here.
The build runs it after linking memdiagd; the .deb installs the result.

  deploy/man/make-manpage.py MEMDIAGD OUTPUT"""
import re
import subprocess
import sys


def run(memdiagd, *args):
    p = subprocess.run([memdiagd, *args], capture_output=True, text=True, timeout=30)
    text = p.stdout or p.stderr
    if not text.strip():
        raise SystemExit("make-manpage: %s %s printed nothing (exit %d)" % (memdiagd, " ".join(args), p.returncode))
    return text


def roff(text):
    """Text as roff: backslashes and hyphens escaped, no line starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def split_help(text):
    """(usage lines, [(option, description)], trailing paragraphs) of a --help text."""
    usage, options, trailing = [], [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith(("usage:", "       ")) and not options:
            usage.append(line[len("usage: "):].rstrip())
        elif re.match(r"^  -", line):
            m = re.match(r"^  (\S+(?: [A-Z|a-z:.]+)?)\s{2,}(.*)$", line)
            options.append([m.group(1), m.group(2)] if m else [line.strip(), ""])
        elif line.startswith("    ") and options:
            options[-1][1] += " " + line.strip()
        else:
            trailing.append(line.strip())
    return usage, options, trailing


def option_list(options):
    out = []
    for flag, description in options:
        name, _, arg = flag.partition(" ")
        out += [".TP", "\\fB%s\\fR%s" % (roff(name), " \\fI%s\\fR" % roff(arg) if arg else ""), roff(description)]
    return out


def manpage(memdiagd):
    version = run(memdiagd, "--version").split()[1]
    usage, options, _ = split_help(run(memdiagd, "--help"))
    d_usage, d_options, _ = split_help(run(memdiagd, "diagnose", "--help"))
    r_usage, r_options, r_trailing = split_help(run(memdiagd, "record", "--help"))
    out = ['.TH MEMDIAGD 8 "" "memdiag %s" "System Administration"' % roff(version),
           ".SH NAME", "memdiagd \\- tell why a node's workloads are slow or dying for memory",
           ".SH SYNOPSIS", ".nf"] + [roff(u) for u in usage] + [".fi",
           ".SH DESCRIPTION",
           roff("memdiagd samples the kernel's memory interfaces every second (meminfo, vmstat, "
                "pressure stall information, the vm sysctls, memory cgroups v1 and v2, every process's "
                "map count and memory, eBPF reclaim-stall histograms and OOM victims, and a canary that "
                "times page faults) and answers three questions for the node and every cgroup with a "
                "memory limit: is anything stalling on memory and who is to blame; how much has been "
                "promised that cannot all be paid; what is about to break. It serves the answers to "
                "Prometheus, as a JSON report and as a status page, and prints them with "
                "memdiagd diagnose."),
           ".PP", roff("Flags override the configuration file; every key of it is documented in "
                       "/etc/memdiag/memdiagd.yaml as installed."),
           ".SH OPTIONS"] + option_list(options)
    out += [".SH COMMANDS", ".SS diagnose", ".nf"] + [roff(u) for u in d_usage] + [".fi",
            roff("Prints what is stalling, why and who, the overcommit picture, what is about to break and "
                 "what to do: from the running daemon, or sampled locally for a while when none answers.")]
    out += option_list(d_options)
    out += [".SS record", ".nf"] + [roff(u) for u in r_usage] + [
            ".fi", roff("Samples the node as the daemon would and writes every snapshot to a file, for a "
                        "ticket or a later memdiagd diagnose --replay on any machine.")]
    out += option_list(r_options) + ([".PP", roff(" ".join(r_trailing))] if r_trailing else [])
    out += [".SH ENDPOINTS",
            ".TP", "\\fB/metrics\\fR", roff("Prometheus text format (gzip when asked). Rendered from the latest sample: "
                                            "a scrape never reads the kernel."),
            ".TP", "\\fB/api/v1/diagnosis\\fR", roff("The diagnosis report, JSON (schema memdiag.diagnosis/v1) or "
                                                     "?format=text."),
            ".TP", "\\fB/api/v1/history\\fR", roff("The key signals of the recent samples, JSON."),
            ".TP", "\\fB/\\fR", roff("The status page for a person on call."),
            ".TP", "\\fB/healthz\\fR", roff("200 while samples keep completing, 503 when the sampler is stuck."),
            ".SH SIGNALS",
            ".TP", "\\fBSIGHUP\\fR", roff("Reload the configuration file; an invalid one is logged and the running "
                                           "configuration kept."),
            ".TP", "\\fBSIGTERM\\fR, \\fBSIGINT\\fR", roff("Stop."),
            ".SH EXIT STATUS",
            ".TP", "0", "Success.",
            ".TP", "1", roff("Runtime failure: the listen address is taken, or a stop was forced because the sampler "
                             "was stuck in a kernel read."),
            ".TP", "2", roff("Bad command line or configuration (the message names file, line, key and reason)."),
            ".SH FILES",
            ".TP", "/etc/memdiag/memdiagd.yaml", roff("The configuration, every key documented."),
            ".TP", "/lib/systemd/system/memdiagd.service", roff("The systemd unit (Type=notify, watchdog, sandboxed)."),
            ".TP", "/run/memdiag/memdiagd.sock", roff("web.unix_socket in the shipped configuration: the endpoints for "
                                                   "root on the node, without TLS or basic auth; memdiagd diagnose "
                                                   "run as root uses it."),
            ".TP", "/usr/share/memdiag/", roff("Prometheus scrape job, alert and recording rules with their tests, "
                                                "Grafana dashboards."),
            ".TP", "/usr/share/doc/memdiag/", roff("README.md and docs/: installation, configuration, metrics, "
                                                    "the diagnosis, alerts and their runbooks, operations."),
            ".SH SEE ALSO",
            "\\fBsystemctl\\fR(1), \\fBjournalctl\\fR(1), \\fBproc\\fR(5), \\fBprometheus\\fR(1)"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    page = manpage(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
