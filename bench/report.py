#!/usr/bin/env python3
"""report.py: the Markdown tables of bench/README.md's current figures from gemmtune-bench
JSON files (--json): one summary line per file, then one table per file, each row a shape.

Usage: python3 bench/report.py LABEL=A.json [LABEL=B.json ...] > figures.md
LABEL names the shape file (e.g. suite, heldout). Ratios are reference time / gemmtune
time: above 1, gemmtune is faster.
"""
import json
import sys


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def worst(classes, key, shape_key):
    rows = [(v.get(key), v.get(shape_key), c) for c, v in classes.items() if v.get(key) is not None]
    if not rows:
        return "n/a"
    r, shape, c = min(rows)
    return "%.3f (%s, %s)" % (r, c, shape)


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        sys.stderr.write(__doc__)
        return 2
    runs = []
    for arg in argv[1:]:
        label, path = arg.split("=", 1)
        with open(path) as f:
            runs.append((label, json.load(f)))
    gpu = runs[0][1]["gpu"]
    print("GPU: %s (cc %s, %d SMs). Runs: %s." % (gpu["name"], gpu["cc"], gpu["sms"],
                                                   ", ".join(sorted({d["date"][:10] for _, d in runs}))))
    print()
    print("| dtype | shapes | n | geomean vs cuBLAS | geomean vs cuBLASLt best | worst class vs cuBLAS | worst class vs cuBLASLt |")
    print("|---|---|---|---|---|---|---|")
    for label, d in runs:
        cl = d.get("class_min_ratio", {})
        print("| %s | %s | %d | %s | %s | %s | %s |" % (
            d["dtype"], label, d.get("geomean_shapes", len(d["shapes"])),
            fmt(d.get("geomean_ratio"), ".3f"), fmt(d.get("geomean_ratio_lt"), ".3f"),
            worst(cl, "min_ratio", "shape"), worst(cl, "min_ratio_lt", "shape_lt")))
    for label, d in runs:
        print()
        print("### %s, %s" % (d["dtype"], label))
        print()
        print("| shape | class | gt µs | cuBLAS µs | cuBLASLt µs | ratio | ratio_lt | gt TFLOP/s | %floor | cold s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for s in d["shapes"]:
            shape = "%dx%dx%d:%s%s" % (s["m"], s["n"], s["k"], s["opa"], s["opb"])
            if not s.get("ok"):
                print("| %s | %s | failed | | | | | | | |" % (shape, s.get("class", "")))
                continue
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                shape, s["class"], fmt(s.get("gt_us"), ".1f"), fmt(s.get("cublas_us"), ".1f"),
                fmt(s.get("cublaslt_us"), ".1f"), fmt(s.get("ratio"), ".3f"),
                fmt(s.get("ratio_lt"), ".3f"), fmt(s.get("gt_tflops"), ".2f"),
                fmt(s.get("pct_floor"), ".1f"), fmt(s.get("cold_s"), ".2f")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
