#!/usr/bin/env python3
"""dmma_sweep.py: are the fp64 tensor-core kernels (kernel_src/gemm_dmma.cu), or with
DS_DTYPE=tf32 the tf32 ones of kernel_src/gemm_mma.cu, right on every tile shape the tuner
offers? On a machine with an NVIDIA GPU, each distinct tile of the
configurations in CFGFILE (split-K left out: one split) is checked by dev/kcheck.c on each
shape of $DS_SHAPES, exact kernels (or generic ones with DS_GENERIC=1): two launches from
the same C, each against the float64 reference, and the two bit for bit. Prints the failed
pairs and the kernels that spilled.

  CUDA=/usr/local/cuda; . dev/kcheck_lib.sh; kcheck_build /tmp/kc /tmp/kc.log
  /tmp/prebuild_set f64 NT 16 1 | awk '/^f64/ {print $5}' | sed 's/_g1//' > /tmp/cfgs.txt
  /tmp/prebuild_set f64 NT 8 1 | awk '/^f64/ {print $5}' | sed 's/_g1//' >> /tmp/cfgs.txt
  python3 dev/dmma_sweep.py /tmp/cfgs.txt

(dev/prebuild_set.c's header builds /tmp/prebuild_set, on a machine without a GPU too.)
The MMA family in tf32 (DS_DTYPE=tf32; DS_SRC defaults to kernel_src/gemm_mma.cu):
  for a in 16 4; do for ab in NN NT TN TT; do /tmp/prebuild_set tf32 $ab $a 2; done; done |
      awk '{print $5}' | sed 's/_g1//' > /tmp/mma_cfgs.txt
Environment: DS_KC kcheck binary (/tmp/kc), DS_SRC kernel source (kernel_src/gemm_dmma.cu;
a copy elsewhere needs common.cuh and types.cuh beside it), DS_SHAPES "M N K opA opB;..."
(seven shapes with and without edges), DS_GENERIC, DS_JOBS (14 processes), KCHECK_SEED.
The block-count bound is the one tuner/kcfg.c gives small tiles (65536 / (threads * 64),
at most 8) for warp tiles of up to 8 fragments, else 1; for MMA, tuner/kcfg.c's
(65536 / (threads * max(64, 1.5 * its register estimate)), 1 to 8)."""
import concurrent.futures as cf
import os
import re
import subprocess
import sys

KC = os.environ.get("DS_KC", "/tmp/kc")
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


def mma_words(t, ta, tb):
    """kcheck's words of an MMA tile (gemm_mma.cu: TM m8 and TN n16 fragments, 4 accumulators
    each; 4-byte elements, k rows padded by 4, m and n rows by 8)."""
    bm, bn, bk, wm, wn, tm, tn, s, v = t
    nt = 32 * (bm // wm) * (bn // wn)
    a = bm * (bk + 4) if ta else bk * (bm + 8)
    b = bk * (bn + 8) if tb else bn * (bk + 4)
    est = 4 * tm * tn + 2 * (2 * tm + 4 * tn) + 52 + (bm + bn) * bk // (v * nt)
    minb = max(1, min(8, 65536 // (nt * max(64, est * 3 // 2))))
    return ("BM=%d BN=%d BK=%d WM=%d WN=%d TM=%d TN=%d STAGES=%d VEC=%d SPLIT=1 RASTER=1 MINB=%d "
            "NACC=%d SMEM=%d" % (bm, bn, bk, wm, wn, tm, tn, s, v, minb, tm * tn * 4,
                                 s * 4 * (a + b))).split() + (["GENERIC=1"] if GEN else [])


def words_of(tiles, pairs):
    """kcheck's KEY=VALUE words of each tile for each (TA, TB) of pairs, from
    dev/kcheck_lib.sh's cfgwords (which derives TM, TN, NACC and the shared memory), split-K
    and rasterization 1, the block-count bound described at the top."""
    if MMA:
        return {(t, ta, tb): mma_words(t, ta, tb) for t in tiles for ta, tb in pairs}
    lines, keys = [], []
    for t in tiles:
        bm, bn, bk, wm, wn, tm, tn, s, v = t
        nt = 32 * (bm // wm) * (bn // wn)
        minb = max(1, min(8, 65536 // (nt * 64))) if tm * tn <= 8 else 1
        for ta, tb in pairs:
            lines.append("%d %d %d %d %d %d %d %d %d 1 1 %d" % (ta, tb, bm, bn, bk, wm, wn, s, v, minb))
            keys.append((t, ta, tb))
    out = subprocess.run(["bash", "-c", '. dev/kcheck_lib.sh; while read ta tb cfg; do '
                          'cfgwords "$ta" "$tb" "$cfg"; done'], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    words = {}
    for k, line in zip(keys, out):
        words[k] = line.split() + (["GENERIC=1"] if GEN else [])
    if len(words) != len(keys):
        sys.exit("cfgwords gave %d lines for %d configurations" % (len(words), len(keys)))
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
