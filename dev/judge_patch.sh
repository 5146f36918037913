#!/usr/bin/env bash
# judge_patch.sh: GPU. Does a change to the cost model or the selector (a dev/*.patch)
# carry over to shapes it was not judged on? On one machine, in one run: the tree as it
# is and a copy with PATCH applied, each built; each runs bench/heldout.txt in mode
# cached from a fresh user cache with $JP_SHIPPED (default data/defaults/h100.txt) shipped
# as a read-only file and the built-in defaults off (the shipped-file target's run, the
# node's set not prebuilt), per type of $JP_DTYPES (default "f64 f32 tf32"), the two trees
# one after the other per type. Then the patched tree tunes bench/train.txt wide (96
# candidates, 5 s a shape) for the types of $JP_WIDE (default none), as cache texts for
# dev/select_loo.c's LOO_WIDE beside the tree's own (bench/runs/*-widetrain-*.txt): its
# new choices are then timed too.
# Prints each run's geometric mean against cuBLAS's default and its worst shape.
# Usage: bash dev/judge_patch.sh PATCH ; logs, JSON and cache texts to $OUT (default
# ./gpu-out). On the project's device machine: copy ../shared/device to .device first
# (SQLite headers) and carry it.
set -uo pipefail
patch_file=$(realpath "${1:?usage: bash dev/judge_patch.sh PATCH}")
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
rc=0
tree=/tmp/judge-patched
rm -rf "$tree" && mkdir -p "$tree"
tar --exclude='./build*' --exclude=./.git --exclude=./.device --exclude='./*-out' -cf - . | tar -xf - -C "$tree"
(cd "$tree" && patch -p1 --quiet <"$patch_file") || { echo "judge_patch: $patch_file does not apply"; exit 1; }
(cd "$tree" && meson setup b >"$OUT/jp-setup.log" 2>&1 && meson compile -C b >"$OUT/jp-build.log" 2>&1) ||
  { echo "judge_patch: the patched tree does not build"; tail -30 "$OUT/jp-build.log"; exit 1; }
shipped=$OUT/jp-shipped.db
rm -f "$shipped"*
./$B/gemmtune --cache "$shipped" import "${JP_SHIPPED:-data/defaults/h100.txt}" >"$OUT/jp.log" 2>&1 || rc=1
for dt in ${JP_DTYPES:-f64 f32 tf32}; do
  for which in base patched; do
    bin=./$B; [ "$which" = patched ] && bin=$tree/b
    rm -f "$OUT/jp-fresh.db"*
    GEMMTUNE_MODE=cached GEMMTUNE_CACHE="$OUT/jp-fresh.db" GEMMTUNE_CACHE_PATH="$shipped" GEMMTUNE_DEFAULTS=0 \
      "$bin/gemmtune-bench" --no-lt --dtype "$dt" --file bench/heldout.txt \
      --json "$OUT/jp-$which-$dt.json" >>"$OUT/jp.log" 2>&1 || rc=1
    [ -f "$OUT/jp-$which-$dt.json" ] || { echo "$which $dt: no result ($OUT/jp.log)"; rc=1; continue; }
    python3 - "$OUT/jp-$which-$dt.json" "$which" "$dt" <<'PY' || rc=1
import json, math, sys
rows = json.load(open(sys.argv[1]))["shapes"]
g = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
w = min(rows, key=lambda r: r["ratio"])
print("%-7s %-5s geomean %.3f over %d, worst %dx%dx%d %s%s %.3f" % (sys.argv[2], sys.argv[3], g, len(rows),
      w["m"], w["n"], w["k"], w["opa"], w["opb"], w["ratio"]))
PY
  done
done
rm -f "$OUT/jp-fresh.db"* "$shipped"*
for dt in ${JP_WIDE:-}; do
  rm -f "$OUT/jp-wide.db"*
  GEMMTUNE_DEFAULTS=0 "$tree/b/gemmtune" --cache "$OUT/jp-wide.db" tune --file bench/train.txt \
    --candidates 96 --budget 5 --dtype "$dt" >>"$OUT/jp.log" 2>&1 || rc=1
  GEMMTUNE_DEFAULTS=0 "$tree/b/gemmtune" --cache "$OUT/jp-wide.db" export --text \
    -o "$OUT/jp-widetrain-$dt.txt" >>"$OUT/jp.log" 2>&1 || rc=1
  echo "patched $dt: wide tunings of bench/train.txt in $OUT/jp-widetrain-$dt.txt"
done
rm -f "$OUT/jp-wide.db"*
exit $rc
