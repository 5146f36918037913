#!/usr/bin/env python3
"""decode_report.py: the table of bench/README.md's byte-bound figures (bench/decode.txt)
from gemmtune-bench JSON files (--json): per shape and type, gemmtune's time, the floor
(compulsory bytes at 3.0 TB/s), time over floor, the memory rate reached (those bytes over
gemmtune's time, and as a fraction of the 3.0 TB/s measured and 3.35 TB/s peak), cuBLAS's
time and cuBLASLt's best, and the ratios (reference time / gemmtune time: above 1,
gemmtune is faster).

Usage: python3 bench/decode_report.py A.json [B.json ...] > table.md
"""
import json
import sys

MEASURED, PEAK = 3.0e12, 3.35e12


def fmt(x, spec):
    return "n/a" if x is None or x != x else format(x, spec)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    print("| shape | dtype | gemmtune us | floor us | time / floor | TB/s | of 3.0 | of 3.35 "
          "| cuBLAS us | cuBLASLt best us | vs cuBLAS | vs cuBLASLt | winner |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in argv[1:]:
        with open(path) as f:
            d = json.load(f)
        for s in d["shapes"]:
            gt, fl = s.get("gt_us"), s.get("floor_us")
            # The floor is bytes at 3.0 TB/s where memory bounds it (every shape here).
            bytes_ = fl * 1e-6 * MEASURED if s.get("bound") == "mem" else None
            rate = bytes_ / (gt * 1e-6) if bytes_ and gt else None
            print("| %dx%dx%d:%s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                s["m"], s["n"], s["k"], s["opa"], s["opb"], s["dtype"], fmt(gt, ".1f"),
                fmt(fl, ".1f"), fmt(gt / fl if gt and fl else None, ".2f"),
                fmt(rate / 1e12 if rate else None, ".2f"),
                fmt(rate / MEASURED if rate else None, ".2f"),
                fmt(rate / PEAK if rate else None, ".2f"), fmt(s.get("cublas_us"), ".1f"),
                fmt(s.get("cublaslt_us"), ".1f"), fmt(s.get("ratio"), ".2f"),
                fmt(s.get("ratio_lt"), ".2f"), s.get("config") or s.get("source", "")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
