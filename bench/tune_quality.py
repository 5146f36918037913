#!/usr/bin/env python3
"""tune_quality.py: issue 27's table from `tools/gpu_run.sh tunequality`'s show file.

For each held-out shape and dtype, three tunings each from their own cache: `hist`, the
default budget with the public suite's tunings in the cache (the history the ranking
learns from); `none`, the default budget with an empty cache; `ref`, the reference
search named on the file's `# reference:` line (`--exhaustive`, every candidate the rules
keep, unless a shorter one was asked for). Reads `gemmtune show`'s lines (the winner's
time as the tuner measured it, and each candidate's status) and prints, per shape, the
winners' times, the speed each default-budget run reached against the reference (its time
/ the run's time) and how many candidates each compiled and timed (compiled/timed); then
the geometric means per dtype against the targets (0.97 with history, 0.93 without, of
exhaustive).

Usage: python3 bench/tune_quality.py tq-show.txt [more-show.txt ...]
With several files, a run (dtype, shape, hist/none/ref) comes from the first file that
holds it: a later session's hist and none runs can be set against an earlier reference
(tools/gpu_run.sh tunequality with TQ_RUNS="hist none").
"""
import math
import re
import sys

runs = {}  # (dtype, shape) -> run -> {"us": float, "timed": int, "compiled": int}
ref = "--exhaustive"
for path in sys.argv[1:]:
    cur = None
    file_ref = "--exhaustive"
    for line in open(path, encoding="utf-8"):
        r = re.match(r"# reference: (.*)$", line.strip())
        if r:
            file_ref = r.group(1)
            continue
        m = re.match(r"=== (\S+) (\S+) (hist|none|ref|exhaustive)$", line.strip())
        if m:
            kind = "ref" if m.group(3) == "exhaustive" else m.group(3)
            shape_runs = runs.setdefault((m.group(1), m.group(2)), {})
            if kind in shape_runs:
                cur = None  # an earlier file holds this run
                continue
            cur = shape_runs[kind] = {"us": None, "timed": 0, "compiled": 0}
            if kind == "ref":
                ref = file_ref
            continue
        if cur is None:
            continue
        w = re.search(r"\swinner (\S+)\s+([0-9.]+) us", line)
        if w:
            cur["us"] = float(w.group(2))
            continue
        c = re.match(r"\s+(f\d\S*)\s+(\S+)\s", line)
        if c:
            status = c.group(2)
            if status == "ok":
                cur["timed"] += 1
            if status not in ("not_timed", "compile_failed"):
                cur["compiled"] += 1

print("Reference search: `gemmtune tune %s`%s\n" % (
    ref, "" if ref == "--exhaustive" else " (not exhaustive: the ratios are against a deeper "
    "search, not against the best of every candidate)"))
print("| shape | dtype | hist us | none us | ref us | hist / ref speed | none / ref speed "
      "| compiled/timed: hist, none, ref |")
print("|---|---|---|---|---|---|---|---|")
by_dt = {}
for (dt, shape), r in sorted(runs.items()):
    h, n, e = (r.get(k, {}).get("us") for k in ("hist", "none", "ref"))
    sh = e / h if h and e else None
    sn = e / n if n and e else None
    if sh and sn:
        by_dt.setdefault(dt, []).append((sh, sn))
    f = lambda x: "%.1f" % x if x else "-"
    g = lambda x: "%.3f" % x if x else "-"
    t = ", ".join("%s/%s" % (r[k]["compiled"], r[k]["timed"]) if k in r else "-"
                  for k in ("hist", "none", "ref"))
    print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (shape, dt, f(h), f(n), f(e), g(sh), g(sn), t))
print()
for dt, v in sorted(by_dt.items()):
    gh = math.exp(sum(math.log(a) for a, _ in v) / len(v))
    gn = math.exp(sum(math.log(b) for _, b in v) / len(v))
    print("%s: %d shapes, default budget with history %.3f of the reference's speed (target 0.97 "
          "of exhaustive), without %.3f (target 0.93)" % (dt, len(v), gh, gn))
