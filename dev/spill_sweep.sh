#!/usr/bin/env bash
# spill_sweep.sh: on a GPU machine, does any kernel family other than DMMA compute wrong
# results when ptxas spills? Tunes each $SWEEP case with every candidate verified
# (GEMMTUNE_TUNE_VERIFY_ALL=1, up to 64 candidates, no time budget) and a debug log, then
# joins each candidate's local memory (tuner/kern.c's debug line "loaded ... bytes of local
# memory") with its status in the cache: per family, how many spilled and how many of those
# and of the others failed verification. Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=build-gpu
[ -d $B ] || meson setup $B >"$OUT/setup.log" 2>&1 || exit 1
meson compile -C $B >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
DB="$OUT/sweep.db"
rm -f "$DB"* "$OUT/sweep.log"
for c in ${SWEEP:-f32:1000x999x1001:TT f32:300x200x40001:TN f32:777x555x3333:NT f32:4096x4096x4096:NN \
    f64:300x200x40001:NT f64:1000x999x1001:TT tf32:1001x999x1003:NN tf32:300x200x40001:NT \
    bf16:1001x999x1003:TN bf16:4096x4096x4096:NN f16:300x200x40001:NT f32_3xtf32:1001x999x1003:NN}; do
  dt=${c%%:*}; s=${c#*:}
  echo "=== $dt $s" >>"$OUT/sweep.log"
  GEMMTUNE_LOG=debug GEMMTUNE_TUNE_VERIFY_ALL=1 GEMMTUNE_TUNE_MAX_CANDIDATES=64 GEMMTUNE_TUNE_BUDGET_S=100000 \
    timeout 120 ./$B/gemmtune --cache "$DB" run --reps 1 --dtype "$dt" "$s" >>"$OUT/sweep.log" 2>&1
  echo "$dt $s rc=$?"
done
python3 - "$DB" "$OUT/sweep.log" <<'PY'
import re, sqlite3, sys, collections
local, case = {}, None
for line in open(sys.argv[2], errors="replace"):
    h = re.match(r"=== (\S+) (\d+)x(\d+)x(\d+)", line)
    if h: case = (h.group(1), int(h.group(2)), int(h.group(3)), int(h.group(4)))
    m = re.search(r"loaded (\S+): (\d+) registers, (\d+) bytes of local memory", line)
    if m and case: local[case + (m.group(1),)] = int(m.group(3))
con = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in con.execute("pragma table_info(timings)")]
stat = collections.Counter()
for row in con.execute("select * from timings"):
    r = dict(zip(cols, row))
    cfg, status, msg = r["config"], r["status"], r["message"] or ""
    fam = cfg.split("_")[0]
    loc = local.get((r["dtype"], r["m"], r["n"], r["k"], cfg), 0)
    spill = "spill" if loc > 0 or "spills" in msg else "no-spill"
    stat[(r["dtype"], fam, spill, status)] += 1
    if status.startswith("verify"):
        print("VERIFY FAILED", r["dtype"], r["m"], r["n"], r["k"], cfg, spill, msg)
for k in sorted(stat): print(*k, stat[k])
PY
