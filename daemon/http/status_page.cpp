// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/status_page.hpp"

#include <string_view>

#include "daemon/http/csp_hash.hpp"

namespace memdiag::http {

namespace {

// The elements the script fills carry stable ids and data- attributes (data-level,
// data-code, data-count, data-points), which tests/e2e/test_status_page.py reads.
constexpr std::string_view kBodyBefore = R"page(<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memdiagd</title>
<link rel="icon" href="data:,">
<style>)page";

constexpr std::string_view kStyle = R"page(
:root{--bg:#fff;--fg:#1c2126;--mut:#68707a;--card:#f3f5f7;--line:#d5d9de;--l0:#2e7d32;--l1:#8d7a00;
--l2:#d05f00;--l3:#c62828;--l4:#6a1b9a;--s0:#1565c0;--s1:#c62828;--s2:#2e7d32}
@media (prefers-color-scheme:dark){:root{--bg:#14171a;--fg:#e3e6e9;--mut:#9aa3ad;--card:#1e2227;
--line:#363c44;--s0:#64b5f6;--s1:#ef5350;--s2:#81c784}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;flex-wrap:wrap;gap:.2em 1em;align-items:baseline;padding:.5em 1em;
border-bottom:1px solid var(--line)}
h1{font-size:1.2em;margin:0}
h2{font-size:1.05em;margin:1.2em 0 .4em}
h3{font-size:.95em;margin:.8em 0 .3em}
main{max-width:72em;margin:0 auto;padding:0 1em 2em}
.grid{display:grid;gap:.8em;grid-template-columns:repeat(auto-fit,minmax(19em,1fr))}
.charts{grid-template-columns:repeat(auto-fit,minmax(24em,1fr))}
.card{background:var(--card);border-radius:6px;padding:.5em .9em .7em;min-width:0}
.card h2{margin-top:.2em}
.level{display:inline-block;font-weight:700;font-size:1.5em;padding:0 .45em;border-radius:4px;color:#fff;
background:var(--mut)}
.level[data-level="0"]{background:var(--l0)}.level[data-level="1"]{background:var(--l1)}
.level[data-level="2"]{background:var(--l2)}.level[data-level="3"]{background:var(--l3)}
.level[data-level="4"]{background:var(--l4)}
ul,ol{margin:.3em 0;padding-left:1.3em}
table{border-collapse:collapse;width:100%;font-size:.88em}
th,td{text-align:left;padding:.18em .45em;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--mut)}
.num{text-align:right;white-space:nowrap}
.path,.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}
.path{word-break:break-all}.name{white-space:nowrap}
.scroll{overflow-x:auto}
.muted,.none{color:var(--mut)}
dl{display:grid;grid-template-columns:auto 1fr;gap:.1em .8em;margin:.3em 0}
dt{color:var(--mut)}dd{margin:0}
.bar{position:relative;height:.7em;background:var(--line);border-radius:3px;margin:.15em 0 .5em;overflow:hidden}
.bar i{position:absolute;left:0;top:0;bottom:0;background:var(--s0)}
.bar i.over{background:var(--l3)}
#banner{display:none;margin:.8em 0;padding:.5em .9em;border-radius:6px;background:var(--l3);color:#fff}
body[data-state=error] #banner{display:block}
svg{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:var(--mut)}
svg line{stroke:var(--line);stroke-width:1}
svg path{fill:none;stroke-width:1.6;stroke-linejoin:round;vector-effect:non-scaling-stroke}
path.s0{stroke:var(--s0)}path.s1{stroke:var(--s1)}path.s2{stroke:var(--s2)}
.legend{font-size:.85em;display:flex;flex-wrap:wrap;gap:.1em 1em}
.legend i{display:inline-block;width:.8em;height:.25em;margin-right:.3em;vertical-align:middle}
i.s0{background:var(--s0)}i.s1{background:var(--s1)}i.s2{background:var(--s2)}
@media (max-width:40em){.scroll thead{display:none}
.scroll tr{display:block;padding:.3em 0;border-bottom:1px solid var(--line)}
.scroll td{display:inline-block;border:0;padding:0 .9em 0 0;text-align:left}
.scroll td.path{display:block}
.scroll td::before{content:attr(data-label) ": ";color:var(--mut)}
.scroll td.path:first-child::before{content:none}}
footer{max-width:72em;margin:0 auto;padding:1em;border-top:1px solid var(--line);font-size:.85em}
footer a{color:inherit;margin-right:1em}
)page";

constexpr std::string_view kBetween = R"page(</style>
</head>
<body lang="en" data-state="loading">
<header><h1>memdiagd</h1><span id="updated" class="muted">waiting for the daemon&hellip;</span></header>
<main>
<div id="banner" role="alert"></div>
<div class="grid">
<section class="card"><h2>Memory stall</h2><span id="stall-level" class="level">&hellip;</span>
<span id="stall-instant" class="muted"></span><ul id="stall-reasons"></ul><div id="stall-figures"></div></section>
<section class="card"><h2>Overcommit risk</h2><span id="overcommit-level" class="level">&hellip;</span>
<span id="overcommit-mode" class="muted"></span><ul id="overcommit-reasons"></ul></section>
<section class="card"><h2>About to break</h2><span id="breaking-level" class="level">&hellip;</span>
<p id="breaking-first" class="muted path"></p></section>
</div>
<h2>About to break</h2><div id="breaking-items"></div>
<h2>Contributors</h2><div id="contributors"></div>
<h2>Victims</h2><div id="victims"></div>
<h3>Processes behind the pressure</h3><div id="processes"></div>
<h3>Stalling cgroups</h3><div id="cgroups"></div>
<h2>Promises</h2>
<div class="grid"><section class="card"><p id="mode-meaning" class="muted"></p><div id="promise-figures"></div></section>
<section class="card"><h3>Top promise holders: processes</h3><div id="promise-processes"></div>
<h3>Top promise holders: cgroups</h3><div id="promise-cgroups"></div></section></div>
<h2>Last minutes</h2>
<div class="grid charts">
<section class="card"><h3>Levels (0 none &ndash; 4 critical)</h3><div id="chart-levels"></div></section>
<section class="card"><h3>Memory PSI (stall time per second)</h3><div id="chart-psi"></div></section>
<section class="card"><h3>Memory and commit</h3><div id="chart-memory"></div></section>
<section class="card"><h3>Reclaim and faults (pages/s)</h3><div id="chart-reclaim"></div></section>
</div>
<h2>Next steps</h2><ol id="next-steps"></ol>
<h2>Recent transitions</h2><div id="timeline"></div>
<h2>Sources down</h2><div id="sources-down"></div>
</main>
<footer><a href="/metrics">/metrics</a><a href="/api/v1/diagnosis?format=text">/api/v1/diagnosis</a><a
href="/api/v1/history">/api/v1/history</a><a href="/healthz">/healthz</a></footer>
<script>)page";

constexpr std::string_view kScript = R"page(
"use strict";
(function () {
  var REFRESH_MS = 5000;
  var NS = "http://www.w3.org/2000/svg";
  var loaded = false;
  var renders = 0;
  var timer = null;

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }
  function has(x) { return x !== undefined && x !== null; }

  function fig(x) {
    if (!has(x)) return "\u2013";
    var a = Math.abs(x);
    if (a >= 1000) return String(Math.round(x));
    if (a === 0) return "0";
    return String(Number(x.toPrecision(3)));
  }
  function bytes(b) {
    if (!has(b)) return "\u2013";
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], v = Math.abs(b), i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (b < 0 ? "-" : "") + (i === 0 || v >= 100 ? v.toFixed(0) : v.toFixed(1)) + " " + units[i];
  }
  function pct(r) {
    if (!has(r)) return "\u2013";
    var p = r * 100;
    return (Math.abs(p) < 10 ? p.toFixed(1) : p.toFixed(0)) + "%";
  }
  function perSecond(x) { return has(x) ? fig(x) + "/s" : "\u2013"; }
  function bytesPerSecond(x) { return has(x) ? bytes(x) + "/s" : "\u2013"; }
  function duration(s) {
    if (!has(s)) return "\u2013";
    if (s < 120) return Math.round(s) + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }
  function clock(ms) {
    var d = new Date(ms);
    function two(n) { return (n < 10 ? "0" : "") + n; }
    return two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
  }
  function last(list) {
    for (var i = list.length - 1; i >= 0; i--) if (has(list[i])) return list[i];
    return null;
  }

  function showLevel(id, level) {
    var e = $(id);
    e.textContent = level ? level.name : "unknown";
    e.setAttribute("data-level", level ? level.value : "");
  }
  function showReasons(id, list) {
    var ul = clear($(id));
    list = list || [];
    ul.setAttribute("data-count", list.length);
    if (!list.length) {
      ul.appendChild(el("li", "no reason: every figure is below its threshold", "none"));
      return;
    }
    list.forEach(function (r) {
      var li = el("li");
      li.setAttribute("data-code", r.code);
      li.appendChild(el("b", r.code));
      li.appendChild(document.createTextNode(" " + fig(r.value) + " \u2265 " + fig(r.threshold) + " (" + r.level + ")"));
      ul.appendChild(li);
    });
  }
  // cols: [heading, function(row) -> text, class]; the first column with class "path" names the row.
  function showTable(id, cols, rows, empty) {
    var box = clear($(id));
    rows = rows || [];
    box.setAttribute("data-count", rows.length);
    if (!rows.length) {
      box.appendChild(el("p", empty || "none", "none"));
      return;
    }
    var table = el("table"), head = el("tr"), body = el("tbody"), thead = el("thead");
    cols.forEach(function (c) { head.appendChild(el("th", c[0], c[2])); });
    thead.appendChild(head);
    rows.forEach(function (row) {
      var tr = el("tr");
      cols.forEach(function (c) {
        var td = el("td", c[1](row), c[2]);
        td.setAttribute("data-label", c[0]);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(thead);
    table.appendChild(body);
    var scroll = el("div", null, "scroll");
    scroll.appendChild(table);
    box.appendChild(scroll);
  }
  function showFacts(id, facts) {
    var dl = el("dl");
    facts.forEach(function (f) {
      dl.appendChild(el("dt", f[0]));
      dl.appendChild(el("dd", f[1]));
    });
    clear($(id)).appendChild(dl);
  }
  function bar(ratio) {
    var b = el("div", null, "bar"), fill = el("i", null, ratio > 1 ? "over" : "");
    fill.style.width = Math.max(0, Math.min(ratio, 1)) * 100 + "%";
    b.appendChild(fill);
    return b;
  }

  var memberCols = [
    ["cgroup", function (m) { return m.cgroup; }, "path"],
    ["share", function (m) { return pct(m.contribution_ratio); }, "num"],
    ["holds", function (m) { return bytes(m.footprint_bytes); }, "num"],
    ["grows", function (m) { return bytesPerSecond(m.growth_bytes_per_second); }, "num"],
    ["frees RAM if stopped", function (m) {
      return bytes(m.relief_bytes) + (m.relief_covers_shortfall ? " (enough)" : "");
    }, "num"],
    ["in swap", function (m) { return bytes(m.swap_bytes); }, "num"],
    ["stall", function (m) { return pct(m.stall_ratio); }, "num"],
    ["refaults", function (m) { return pct(m.refault_ratio); }, "num"],
    ["unbacked", function (m) { return bytes(m.unbacked_promise_bytes); }, "num"]
  ];

  // A wall's figure in its unit: map areas and kills are counts, the others bytes.
  function wallFigure(i) {
    if (i.kind === "map_areas") return Math.round(i.value).toLocaleString("en") + " of " + Math.round(i.limit).toLocaleString("en");
    if (i.kind === "oom_kill") return Math.round(i.value) + " killed by " + i.source;
    return bytes(i.value) + " of " + bytes(i.limit);
  }
  var breakingCols = [
    ["level", function (i) { return i.level; }],
    ["kind", function (i) { return i.kind; }],
    ["subject", function (i) { return i.subject; }, "path"],
    ["figure", wallFigure, "num"],
    ["what fails", function (i) { return i.explanation; }]
  ];

  function render(d, h) {
    var stall = d.stall || {}, oc = d.overcommit;
    document.body.setAttribute("data-sequence", d.sequence);
    document.title = "memdiagd: stall " + (stall.level ? stall.level.name : "?") +
      (oc ? ", overcommit " + oc.level.name : "");
    $("updated").textContent = "sample " + d.sequence + " taken " + clock(Date.parse(d.taken_at)) +
      " (" + d.origin + "), refreshed every " + REFRESH_MS / 1000 + " s";

    showLevel("stall-level", stall.level);
    $("stall-instant").textContent = stall.easing ? "easing: what set it is shown; this sample alone: " +
      stall.instant_level.name : (stall.instant_level && stall.instant_level.value !== stall.level.value ?
      "this sample alone: " + stall.instant_level.name : "");
    showReasons("stall-reasons", stall.reasons);
    showLevel("breaking-level", d.breaking ? d.breaking.level : null);
    var walls = d.breaking ? d.breaking.items : [];
    $("breaking-first").textContent = walls.length ? walls[0].explanation : "nothing is near a wall";
    showTable("breaking-items", breakingCols, walls, "nothing is near a wall");
    var f = stall.figures || {};
    showFacts("stall-figures", [
      ["signals", (stall.signals || []).join(", ") || "none"],
      ["confidence", stall.confidence === "lower_bound" ?
        "a lower bound (missing " + (stall.missing_signals || []).join(", ") + ")" : "complete"],
      ["node short of memory", stall.short_of_memory ? "yes" : "no"],
      ["cgroups stalling at their own limits", has(stall.cgroups_at_limit) ? String(stall.cgroups_at_limit) : "-"],
      ["held outside the cgroups", bytes(stall.unattributed_bytes)],
      ["window", duration(f.window_seconds)],
      ["available", bytes(stall.available_bytes)],
      ["short of headroom", bytes(stall.shortfall_bytes)],
      ["runs out in", has(stall.exhaustion_seconds) ? duration(stall.exhaustion_seconds) : "not on this trend"]
    ]);

    if (oc) {
      showLevel("overcommit-level", oc.level);
      $("overcommit-mode").textContent = "mode " + oc.mode + (oc.mode_known ? "" : " (assumed)");
      showReasons("overcommit-reasons", oc.reasons);
      $("mode-meaning").textContent = oc.mode_meaning;
    } else {
      showLevel("overcommit-level", null);
      $("overcommit-mode").textContent = "no system memory figures";
      showReasons("overcommit-reasons", []);
      $("mode-meaning").textContent = "";
    }

    showTable("contributors", memberCols, stall.contributors);
    showTable("victims", memberCols, stall.victims);
    showTable("processes", [
      ["pid", function (p) { return p.pid; }, "num"],
      ["comm", function (p) { return p.comm; }, "name"],
      ["cgroup", function (p) { return p.cgroup; }, "path"],
      ["share", function (p) { return pct(p.contribution_ratio); }, "num"],
      ["holds", function (p) { return bytes(p.footprint_bytes); }, "num"],
      ["grows", function (p) { return bytesPerSecond(p.growth_bytes_per_second); }, "num"],
      ["frees RAM if stopped", function (p) { return bytes(p.relief_bytes); }, "num"]
    ], stall.processes);
    function names(list) { return (list || []).map(function (m) { return m.cgroup; }).join(", ") || "none"; }
    showTable("cgroups", [
      ["cgroup", function (c) { return c.cgroup; }, "path"],
      ["level", function (c) { return c.level.name; }, ""],
      ["reasons", function (c) { return (c.reasons || []).map(function (r) { return r.code; }).join(", ") || "none"; }, ""],
      ["contributors", function (c) { return names(c.contributors); }, "path"],
      ["victims", function (c) { return names(c.victims); }, "path"]
    ], d.cgroups, "none of the " + d.cgroup_scopes_judged + " cgroups with a limit");

    var charge = last(h.commit_charge_bytes), limit = last(h.commit_limit_bytes);
    var box = clear($("promise-figures"));
    if (oc) {
      var facts = el("dl");
      var fact = function (name, value, ratio) {
        facts.appendChild(el("dt", name));
        var dd = el("dd", value);
        if (has(ratio)) dd.appendChild(bar(ratio));
        facts.appendChild(dd);
      };
      fact("committed", bytes(charge));
      fact("commit limit", bytes(limit) + " (committed " + pct(oc.commit_limit_ratio) + " of it)", oc.commit_limit_ratio);
      fact("committed of RAM + swap", pct(oc.commit_ratio), oc.commit_ratio);
      fact("promised, not backed", bytes(oc.unbacked_bytes));
      fact("supply (available + free swap)", bytes(oc.supply_bytes));
      fact("unbacked / supply", pct(oc.unbacked_to_supply_ratio), oc.unbacked_to_supply_ratio);
      fact("promises come due in", has(oc.exhaustion_seconds) ? duration(oc.exhaustion_seconds) : "no drawdown");
      fact("cgroup limits / RAM", pct(oc.cgroup_limit_overcommit_ratio), oc.cgroup_limit_overcommit_ratio);
      box.appendChild(facts);
    } else {
      box.appendChild(el("p", "no overcommit figures", "none"));
    }
    var holders = d.promise_holders;
    showTable("promise-processes", [
      ["pid", function (p) { return p.pid; }, "num"],
      ["comm", function (p) { return p.comm; }, "name"],
      ["cgroup", function (p) { return p.cgroup; }, "path"],
      ["unbacked", function (p) { return bytes(p.unbacked_promise_bytes); }, "num"],
      ["committed", function (p) { return bytes(p.committed_private_bytes); }, "num"]
    ], holders ? holders.processes : [], holders ? "none" : "the process scan is off");
    showTable("promise-cgroups", [
      ["cgroup", function (c) { return c.cgroup; }, "path"],
      ["unbacked", function (c) { return bytes(c.unbacked_promise_bytes); }, "num"],
      ["committed", function (c) { return bytes(c.committed_private_bytes); }, "num"],
      ["processes", function (c) { return c.processes; }, "num"]
    ], holders ? holders.cgroups : [], holders ? "none" : "the process scan is off");

    var t = h.taken_at_ms || [];
    chart("chart-levels", t, [["stall", h.stall_level], ["overcommit", h.overcommit_level]],
          function (v) { return String(Math.round(v)); }, {max: 4, step: true});
    chart("chart-psi", t, [["some", h.psi_some_ratio], ["full", h.psi_full_ratio]], pct, {floor: 0.01});
    chart("chart-memory", t, [["available", h.available_bytes], ["committed", h.commit_charge_bytes],
                               ["commit limit", h.commit_limit_bytes]], bytes, {floor: 1});
    chart("chart-reclaim", t, [["direct scan", h.direct_scan_pages_per_second],
                                ["file refaults", h.refault_file_pages_per_second],
                                ["pages input", h.pages_input_per_second]], fig, {floor: 1});

    var steps = clear($("next-steps"));
    (d.next_steps || []).forEach(function (s) { steps.appendChild(el("li", s)); });
    if (!steps.firstChild) steps.appendChild(el("li", "nothing to do", "none"));
    showTable("timeline", [
      ["at", function (x) { return clock(Date.parse(x.at)); }, ""],
      ["scope", function (x) { return x.scope; }, "path"],
      ["change", function (x) { return x.from + " \u2192 " + x.to; }, ""],
      ["evidence", function (x) { return x.evidence; }, "path"]
    ], d.timeline, "no transitions kept");
    showTable("sources-down", [
      ["source", function (s) { return s.source; }, "path"],
      ["why", function (s) { return s.error; }, ""]
    ], d.sources_down, "none: every source is up");
  }

  // A line per series over the snapshots' times; a null value breaks the line. data-points: how
  // many snapshots the chart covers (the history's entries).
  function chart(id, t, series, format, opts) {
    var box = clear($(id)), n = t.length, W = 400, H = 120, left = 56, right = 6, top = 6, bottom = 16;
    box.setAttribute("data-points", n);
    var max = opts.max || 0, any = false;
    series.forEach(function (s) {
      (s[1] || []).forEach(function (v) {
        if (!has(v)) return;
        any = true;
        if (!opts.max && v > max) max = v;
      });
    });
    if (!opts.max) max = Math.max(max * 1.1, opts.floor || 0) || 1;
    var svg = document.createElementNS(NS, "svg");
    function add(tag, attrs, text) {
      var e = document.createElementNS(NS, tag);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      if (has(text)) e.textContent = text;
      svg.appendChild(e);
      return e;
    }
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("role", "img");
    function y(v) { return top + (H - top - bottom) * (1 - Math.min(v / max, 1)); }
    [0, 0.5, 1].forEach(function (q) {
      add("line", {x1: left, x2: W - right, y1: y(max * q), y2: y(max * q)});
      add("text", {x: left - 4, y: y(max * q) + 3, "text-anchor": "end"}, format(max * q));
    });
    var t0 = n ? t[0] : 0, span = n > 1 ? t[n - 1] - t0 : 0;
    function x(i) { return left + (W - left - right) * (span > 0 ? (t[i] - t0) / span : 1); }
    add("text", {x: left, y: H - 3}, n > 1 ? "\u2212" + duration(span / 1000) : "");
    add("text", {x: W - right, y: H - 3, "text-anchor": "end"}, n ? clock(t[n - 1]) : "no samples yet");
    var legend = el("div", null, "legend");
    series.forEach(function (s, k) {
      var values = s[1] || [], d = "", pen = false, drawn = 0;
      for (var i = 0; i < n; i++) {
        var v = values[i];
        if (!has(v)) { pen = false; continue; }
        var px = x(i).toFixed(1), py = y(v).toFixed(1);
        d += pen ? (opts.step ? "H" + px + "V" + py : "L" + px + " " + py) : "M" + px + " " + py;
        pen = true;
        drawn++;
      }
      if (!drawn) return;
      add("path", {d: d, "class": "s" + k, "data-series": s[0], "data-drawn": drawn});
      var item = el("span");
      item.appendChild(el("i", null, "s" + k));
      item.appendChild(document.createTextNode(s[0] + " " + format(last(values))));
      legend.appendChild(item);
    });
    box.appendChild(svg);
    if (!any) legend.appendChild(el("span", "not measured on this node", "none"));
    box.appendChild(legend);
  }

  function getJson(url) {
    return fetch(url, {cache: "no-store"}).then(function (r) {
      if (r.ok) return r.json();
      return r.text().then(function (text) { throw new Error(url + ": " + r.status + " " + text.trim()); });
    });
  }
  function setState(state, message) {
    document.body.setAttribute("data-state", state);
    $("banner").textContent = message || "";
  }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, REFRESH_MS);
  }
  function refresh() {
    if (loaded && document.hidden) { schedule(); return; }
    var fetched = Promise.all([getJson("/api/v1/diagnosis"), getJson("/api/v1/history")]);
    // A failed fetch is shown on the page; a failure to render is left uncaught, for the console.
    fetched.then(function (r) {
      render(r[0], r[1]);
      loaded = true;
      document.body.setAttribute("data-renders", ++renders);
      setState("ok");
    }, function (e) {
      setState("error", "Cannot refresh (" + (loaded ? "showing the last answer" : "nothing yet") + "): " + e.message);
    }).finally(schedule);
  }
  document.addEventListener("visibilitychange", function () { if (!document.hidden && loaded) refresh(); });
  refresh();
})();
)page";

constexpr std::string_view kAfter = R"page(</script>
</body>
</html>
)page";

StatusPage build() {
  std::string document;
  document.reserve(kBodyBefore.size() + kStyle.size() + kBetween.size() + kScript.size() + kAfter.size());
  document.append(kBodyBefore).append(kStyle).append(kBetween).append(kScript).append(kAfter);
  // connect-src for the two fetches; img-src data: for the empty icon (no /favicon.ico request).
  std::string policy = "default-src 'none'; script-src " + csp_hash_source(kScript) + "; style-src " +
                       csp_hash_source(kStyle) +
                       "; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
                       "frame-ancestors 'none'";
  return {std::make_shared<const std::string>(std::move(document)), std::move(policy)};
}

}  // namespace

const StatusPage& status_page() {
  static const StatusPage page = build();
  return page;
}

}  // namespace memdiag::http
