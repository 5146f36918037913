#!/usr/bin/env python3
"""dmma_sweep.py: are the fp64 tensor-core kernels (kernel_src/gemm_dmma.cu), or with
DS_DTYPE=tf32 the tf32 ones of kernel_src/gemm_mma.cu, right on every tile shape the tuner
offers? On a machine with an NVIDIA GPU, each distinct tile of the
configurations in CFGFILE (split-K left out: one split) is checked by dev/kcheck.c on each
shape of $DS_SHAPES, exact kernels (or generic ones with DS_GENERIC=1): two launches from
the same C, each against the float64 reference, and the two bit for bit. Prints the failed
pairs and the kernels that spilled.

  CUDA=/usr/local/cuda; . dev/kcheck_lib.sh; kcheck_build /tmp/kc /tmp/kc.log
  (dev/sass.c's build line, after tools/build.sh or tools/gpu_build.sh: /tmp/sass)
  /tmp/prebuild_set f64 NT 16 1 | awk '/^f64/ {print $5}' | sed 's/_g1//' > /tmp/cfgs.txt
  /tmp/prebuild_set f64 NT 8 1 | awk '/^f64/ {print $5}' | sed 's/_g1//' >> /tmp/cfgs.txt
  python3 dev/dmma_sweep.py /tmp/cfgs.txt

(dev/prebuild_set.c's header builds /tmp/prebuild_set, on a machine without a GPU too.)
The MMA family in tf32 (DS_DTYPE=tf32; DS_SRC defaults to kernel_src/gemm_mma.cu):
  for a in 16 4; do for ab in NN NT TN TT; do /tmp/prebuild_set tf32 $ab $a 2; done; done |
      awk '{print $5}' | sed 's/_g1//' > /tmp/mma_cfgs.txt
Environment: DS_KC kcheck binary (/tmp/kc), DS_SASS dev/sass.c's binary (/tmp/sass, built
as its header says: it gives each configuration's macros as the library sets them), DS_SRC
kernel source (kernel_src/gemm_dmma.cu;
a copy elsewhere needs common.cuh and types.cuh beside it), DS_SHAPES "M N K opA opB;..."
(seven shapes with and without edges), DS_GENERIC, DS_JOBS (14 processes), KCHECK_SEED,
DS_DRY=1 (print the kcheck commands, run none)."""
import concurrent.futures as cf
import os
import re
import subprocess
import sys

KC = os.environ.get("DS_KC", "/tmp/kc")
SASS = os.environ.get("DS_SASS", "/tmp/sass")
DT = os.environ.get("DS_DTYPE", "f64")
if DT not in ("f64", "tf32"):
    sys.exit("DS_DTYPE: f64 or tf32")
MMA = DT == "tf32"
SRC = os.environ.get("DS_SRC", "kernel_src/gemm_mma.cu" if MMA else "kernel_src/gemm_dmma.cu")
GEN = os.environ.get("DS_GENERIC", "0") == "1"
SHAPES = [s.split() for s in os.environ.get(
    "DS_SHAPES", "7 4096 2048 N T;77 1000 1030 T N;9 15360 5120 N T;100 333 4097 N N;"
    "1000 999 1001 T T;33 2000 3000 N T;2048 2048 1024 N N").split(";")]


def tiles_of(path):
    tiles = set()
    for line in open(path):
        m = re.match(r"f%d_(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_t(\d+)x(\d+)_s(\d+)_v(\d+)_k" % (2 if MMA else 1), line.strip())
        if m:
            tiles.add(tuple(int(x) for x in m.groups()))
    return sorted(tiles)


# The library's macros that kcheck sets itself from its command line, or that these
# families do not read (ALIGN: SIMT's packing).
KC_OWN = {"DT", "M", "N", "K", "OPA", "OPB", "BETA0", "ALIGN", "WS_COUNTERS"}


def words_of(tiles, pairs):
    """kcheck's KEY=VALUE words of each tile for each (TA, TB) of pairs: the library's own
    NVRTC options of the configuration (dev/sass.c's SASS_OPTS, $DS_SASS), so that the
    launch bound (GT_MINB), the shared memory (GT_SMEM_CHECK, kcheck's SMEM) and every
    other macro are what tuner/kcfg.c gives the kernel; split-K and rasterization 1."""
    fam = 2 if MMA else 1
    lines, keys = [], []
    for t in tiles:
        bm, bn, bk, wm, wn, tm, tn, s, v = t
        cfg = "f%d_%dx%dx%d_w%dx%d_t%dx%d_s%d_v%d_k1_r1%s" % (fam, bm, bn, bk, wm, wn, tm, tn, s, v,
                                                            "_g1" if GEN else "")
        for ta, tb in pairs:
            lines.append("%s 1024x1024x1024:%s%s 16 0 %s" % (DT, "NT"[ta], "NT"[tb], cfg))
            keys.append((t, ta, tb))
    out = subprocess.run([SASS], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         env=dict(os.environ, SASS_OPTS="1"), check=True).stdout.splitlines()
    if len(out) != len(keys):
        sys.exit("%s gave %d lines for %d configurations" % (SASS, len(out), len(keys)))
    words = {}
    for k, line, asked in zip(keys, out, lines):
        if " fail: " in line or not line.startswith("-D"):
            sys.exit("%s: %s" % (asked, line))
        w = []
        for opt in line.split():
            name, _, val = opt[len("-DGT_"):].partition("=")
            if name in KC_OWN:
                continue
            w.append("SMEM=" + val if name == "SMEM_CHECK" else name + "=" + val)
        t = k[0]
        w.append("NACC=%d" % (t[5] * t[6] * (4 if MMA else 2)))
        words[k] = w
    return words


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tiles = tiles_of(sys.argv[1])
    pairs = sorted({(int(sh[3] == "T"), int(sh[4] == "T")) for sh in SHAPES})
    words = words_of(tiles, pairs)
    jobs = []
    for sh in SHAPES:
        ta, tb = int(sh[3] == "T"), int(sh[4] == "T")
        for i in range(0, len(tiles), 8):
            args = [KC, SRC] + sh[:5] + [DT, "0"]
            for t in tiles[i:i + 8]:
                args += words[(t, ta, tb)] + ["/"]
            jobs.append(args[:-1])

    if os.environ.get("DS_DRY") == "1":
        for args in jobs:
            print(" ".join(args))
        return 0

    def run(args):
        env = dict(os.environ, KCHECK_NOTIME="1")
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
        return " ".join(args[2:7]), p.stdout + p.stderr

    checked, failed, spilled = 0, [], []
    with cf.ThreadPoolExecutor(int(os.environ.get("DS_JOBS", "14"))) as ex:
        for shape, out in ex.map(run, jobs):
            for line in out.splitlines():
                m = re.search(r"%s (?:beta0 )?(\S+) (PASS|FAIL)" % DT, line)
                if not m:
                    if "FAIL" in line or "rror" in line:
                        print("!!", shape, line[:200])
                    continue
                checked += 1
                if m.group(2) == "FAIL":
                    failed.append("%s %s: %s" % (shape, m.group(1), line[line.index("FAIL"):][:60]))
                lm = re.search(r"local=(\d+)", line)
                if lm and int(lm.group(1)) > 0:
                    spilled.append("%s %s local=%s" % (shape, m.group(1), lm.group(1)))
    print("%s%s: %d tiles, %d shapes: %d checked, %d failed, %d spilled" % (
        SRC, " (generic)" if GEN else "", len(tiles), len(SHAPES), checked, len(failed), len(spilled)))
    for f in failed:
        print("  FAIL", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
