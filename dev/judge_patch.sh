#!/usr/bin/env bash
# judge_patch.sh: GPU. Does a change to the cost model or the selector (a dev/*.patch)
# carry over to shapes it was not judged on? On one machine, in one run: the tree as it
# is and a copy with PATCH applied, each built; each runs tools/gpu_run.sh heldout's
# shipped-file run (not prebuilt) with $JP_SHIPPED (default data/defaults/h100.txt)
# shipped, per type of $JP_DTYPES (default "f64 f32 tf32"), the two trees one after the
# other per type. Then the patched tree tunes bench/train.txt wide
# (gpu_dev.sh widetrain) for the types of $JP_WIDE (default none), as cache texts in
# $OUT/patched for dev/select_loo.c's LOO_WIDE beside the tree's own
# (bench/runs/*-widetrain-*.txt): its new choices are then timed too.
# Prints each run's geometric mean against cuBLAS's default and its worst shape.
# Usage: bash dev/judge_patch.sh PATCH ; logs to $OUT (default ./gpu-out), each tree's
# JSON and cache texts to $OUT/base and $OUT/patched. On the project's device machine:
# copy ../shared/device to .device first (SQLite headers) and carry it.
set -uo pipefail
patch_file=$(realpath "${1:?usage: bash dev/judge_patch.sh PATCH}")
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
rc=0
tree=/tmp/judge-patched
rm -rf "$tree" && mkdir -p "$tree"
tar --exclude='./build*' --exclude=./.git --exclude=./.device --exclude='./*-out' -cf - . | tar -xf - -C "$tree"
(cd "$tree" && patch -p1 --quiet <"$patch_file") || { echo "judge_patch: $patch_file does not apply"; exit 1; }
(cd "$tree" && meson setup build-gpu >"$OUT/jp-setup.log" 2>&1 && meson compile -C build-gpu >"$OUT/jp-build.log" 2>&1) ||
  { echo "judge_patch: the patched tree does not build"; tail -30 "$OUT/jp-build.log"; exit 1; }
shipped=$OUT/jp-shipped.db
rm -f "$shipped"*
./$B/gemmtune --cache "$shipped" import "${JP_SHIPPED:-data/defaults/h100.txt}" >"$OUT/jp.log" 2>&1 || rc=1
# Each tree's tools/gpu_run.sh heldout (the shipped-file run, not prebuilt), its output in
# $OUT/base and $OUT/patched.
for dt in ${JP_DTYPES:-f64 f32 tf32}; do
  for which in base patched; do
    dir=.; [ "$which" = patched ] && dir=$tree
    (cd "$dir" && OUT="$OUT/$which" HELDOUT_PREBUILD=0 HELDOUT_SHIPS=shipped HELDOUT_SHIPPED="$shipped" \
      HELDOUT_DTYPES="$dt" bash tools/gpu_run.sh heldout >>"$OUT/jp.log" 2>&1) || rc=1
    json=$OUT/$which/heldout-shipped-$dt.json
    [ -f "$json" ] || { echo "$which $dt: no result ($OUT/jp.log)"; rc=1; continue; }
    python3 - "$json" "$which" "$dt" <<'PY' || rc=1
import json, math, sys
rows = json.load(open(sys.argv[1]))["shapes"]
g = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
w = min(rows, key=lambda r: r["ratio"])
print("%-7s %-5s geomean %.3f over %d, worst %dx%dx%d %s%s %.3f" % (sys.argv[2], sys.argv[3], g, len(rows),
      w["m"], w["n"], w["k"], w["opa"], w["opb"], w["ratio"]))
PY
  done
done
rm -f "$shipped"*
# The patched tree's own wide tunings (its build above is the one gpu_dev.sh finds).
if [ -n "${JP_WIDE:-}" ]; then
  (cd "$tree" && OUT="$OUT/patched" WT_DTYPES="$JP_WIDE" bash dev/gpu_dev.sh widetrain) || rc=1
fi
exit $rc
