#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-License-Identifier: Apache-2.0
"""The documentation holds together: every relative link in every Markdown file of the
repository resolves (the file exists; a #fragment names a heading of the target, as GitHub
derives its anchors); the README stays a front page (at most 400 lines); the configuration page
lists every key of the example configs, so a key added to the daemon's config cannot go
undocumented; the generated parts (docs/metrics.md, the alert table) match the code and the
rules; and every alert has a summary, a description and a runbook page with its heading."""
import functools
import os
import re
import subprocess
import sys
import unittest

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_docs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIPPED = 77
README_MAX_LINES = 400

# [text](target) and ![alt](target), not inside code spans or blocks (stripped first).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def markdown_files():
    p = subprocess.run(["git", "-c", "safe.directory=" + ROOT, "ls-files", "-z", "*.md"], cwd=ROOT,
                       capture_output=True)
    if p.returncode != 0:
        return None
    return [n for n in p.stdout.decode().split("\0") if n and not n.startswith("tests/fixtures/")]


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped (hyphens and
    underscores kept), spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    seen, result = {}, set()
    for h in HEADING.findall(text):
        base = slug(h)
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else "%s-%d" % (base, n))
    return result


def links(text):
    text = FENCE.sub("", text)
    text = CODE_SPAN.sub("", text)
    return LINK.findall(text)


def broken_links(name):
    """(target, why) for each relative link of the Markdown file `name` that does not resolve."""
    path = os.path.join(ROOT, name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    broken = []
    for target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not resolved.startswith(ROOT + os.sep) and resolved != ROOT:
            broken.append((target, "points outside the repository"))
        elif not os.path.exists(resolved):
            broken.append((target, "no such file"))
        elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
            broken.append((target, "no heading with that anchor in %s" % os.path.relpath(resolved, ROOT)))
    return broken


def config_keys(node, prefix=""):
    """Dotted paths of every key in a parsed config, leaves and sections alike."""
    keys = []
    if isinstance(node, dict):
        for k, v in node.items():
            path = prefix + str(k)
            keys.append(path)
            keys.extend(config_keys(v, path + "."))
    return keys


class Docs(unittest.TestCase):
    def test_slug(self):
        self.assertEqual(slug("Web security: TLS, basic auth, headers"), "web-security-tls-basic-auth-headers")
        self.assertEqual(slug("`reclaim_stall` (eBPF)"), "reclaim_stall-ebpf")
        self.assertEqual(slug("Hardening: the unit's sandbox, least privilege, staying resident"),
                         "hardening-the-units-sandbox-least-privilege-staying-resident")

    def test_links_checker_finds_a_broken_link(self):
        self.assertEqual(links("see [a](docs/x.md#y), `[not](a link)`, ![img](p.png)"), ["docs/x.md#y", "p.png"])

    def test_every_relative_link_resolves(self):
        files = markdown_files()
        if files is None:
            self.skipTest("not a git checkout")
        self.assertIn("README.md", files)
        broken = ["%s: (%s) %s" % (name, target, why) for name in files for target, why in broken_links(name)]
        self.assertFalse(broken, "broken links:\n" + "\n".join(broken))

    def test_readme_is_a_front_page(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertLessEqual(len(lines), README_MAX_LINES, "the README grew past a front page: move detail to docs/")

    def test_configuration_page_lists_every_key(self):
        with open(os.path.join(ROOT, "docs", "configuration.md"), encoding="utf-8") as f:
            page = f.read()
        missing = []
        for example in ("deploy/memdiagd.yaml", "deploy/windows/memdiagd.yaml"):
            with open(os.path.join(ROOT, example), encoding="utf-8") as f:
                config = yaml.safe_load(f)
            for key in config_keys(config):
                # A section is documented by its keys; a key by its dotted path in a code span.
                if "`%s`" % key not in page and not re.search(r"`%s\.[a-z_]+`" % re.escape(key), page):
                    missing.append("%s: %s" % (example, key))
        self.assertFalse(missing, "keys docs/configuration.md does not list:\n" + "\n".join(missing))

    def test_generated_parts_match_the_code(self):
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generate_docs.py"),
                            "--check"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_every_family_the_exporter_declares_is_in_the_metrics_page(self):
        with open(generate_docs.METRICS_DOC, encoding="utf-8") as f:
            page = f.read()
        declared = generate_docs.declared_families()
        self.assertGreater(len(declared), 100)
        missing = [n for n in declared if n not in generate_docs.PER_FIELD and "`%s`" % n not in page]
        self.assertFalse(missing, missing)

    def test_every_alert_has_its_annotations_and_a_runbook_page(self):
        problems = []
        for rule in generate_docs.alert_rules():
            name, annotations = rule["alert"], rule.get("annotations", {})
            for key in ("summary", "description", "runbook_url"):
                if not annotations.get(key):
                    problems.append("%s: no %s" % (name, key))
            page = generate_docs.runbook_path(annotations.get("runbook_url", ""))
            if not page:
                problems.append("%s: runbook_url does not point into %s" % (name, generate_docs.RUNBOOKS))
                continue
            path, _, anchor = page.partition("#")
            if not os.path.isfile(os.path.join(ROOT, path)):
                problems.append("%s: no runbook %s" % (name, path))
            elif anchor != name.lower() or anchor not in anchors(os.path.join(ROOT, path)):
                problems.append("%s: %s has no heading %s" % (name, path, name))
        self.assertFalse(problems, "\n".join(problems))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIPPED if result.skipped else 0)
