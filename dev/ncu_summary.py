#!/usr/bin/env python3
"""ncu_summary.py: one line per profiled kernel from Nsight Compute's text output of
dev/gpu_dev.sh profile-simt (sections "=== SHAPE WHO", then ncu's metric tables):
time, SM and DRAM throughput, FMA pipe and issue use, occupancy, registers, shared-memory
wavefronts per load instruction (1: no bank conflict, for loads of up to 128 bytes a warp), and the three largest warp stall reasons (warps stalled
per issued instruction)."""
import re
import sys

HEAD = re.compile(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context")
METRIC = re.compile(r"^\s+([a-z0-9_]+__\S+)\s+(\S+\s+)?([\d.,]+)\s*$")
STALL = "smsp__average_warps_issue_stalled_"


def parse(path):
    rows, shape, cur = [], "?", None
    for line in open(path, errors="replace"):
        if line.startswith("=== "):
            shape = line.split()[1]
            continue
        h = HEAD.match(line)
        if h:
            cur = {"shape": shape, "name": h.group(1), "grid": int(h.group(2)) * int(h.group(3)) * int(h.group(4)),
                   "block": int(h.group(5)), "m": {}}
            rows.append(cur)
            continue
        m = METRIC.match(line)
        if m and cur is not None:
            v = float(m.group(3).replace(",", ""))
            unit = (m.group(2) or "").strip()
            if m.group(1) == "gpu__time_duration.sum":  # to microseconds
                v *= {"nsecond": 1e-3, "ns": 1e-3, "msecond": 1e3, "ms": 1e3}.get(unit, 1.0)
            cur["m"][m.group(1)] = v
    return rows


def main():
    rows = parse(sys.argv[1])
    print("%-18s %-34s %6s %4s %4s %8s %5s %5s %5s %5s %5s %6s  %s" %
          ("shape", "kernel", "grid", "blk", "reg", "time_us", "SM%", "DRAM%", "FMA%", "iss%",
           "warp%", "wf/lds", "stalls per issue (top 3)"))
    for r in rows:
        m = r["m"]
        g = lambda k: m.get(k, float("nan"))
        t = g("gpu__time_duration.sum")
        stalls = sorted(((v, k[len(STALL):].replace("_per_issue_active.ratio", ""))
                         for k, v in m.items() if k.startswith(STALL) and "selected" not in k),
                        reverse=True)[:3]
        # Shared-memory wavefronts per load instruction: 1 without bank conflicts (for
        # loads of up to 128 bytes a warp), more with them.
        lds = g("smsp__inst_executed_op_shared_ld.sum")
        bconf = g("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum") / lds if lds else float("nan")
        print("%-18s %-34s %6d %4d %4d %8.2f %5.1f %5.1f %5.1f %5.1f %5.1f %6.3f  %s" %
              (r["shape"], r["name"][:34], r["grid"], r["block"], g("launch__registers_per_thread"),
               t, g("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
               g("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
               g("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
               g("smsp__issue_active.avg.pct_of_peak_sustained_active"),
               g("sm__warps_active.avg.pct_of_peak_sustained_active"), bconf,
               ", ".join("%s %.2f" % (k, v) for v, k in stalls)))


if __name__ == "__main__":
    main()
