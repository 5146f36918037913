#!/usr/bin/env python3
"""count_tests.py: counts test cases from meson's testlog.json (TAP output of each test
program) and prints "N passed, N failed, N skipped". A program that failed or timed out
without reporting a failing case counts as one failed case. Exit 1 on any failure."""
import json
import sys

passed = failed = skipped = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        t = json.loads(line)
        out = t.get("stdout") or t.get("stdo") or ""
        p = f_ = s = 0
        for l in out.splitlines():
            if l.startswith("not ok"):
                f_ += 1
            elif l.startswith("ok"):
                if "# SKIP" in l:
                    s += 1
                else:
                    p += 1
        if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL") and f_ == 0:
            f_ = 1
        passed, failed, skipped = passed + p, failed + f_, skipped + s
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
