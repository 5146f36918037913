#!/usr/bin/env bash
# verify_time.sh BASE_SRC: the tuner's verification time per shape, this tree against the
# source tree BASE_SRC (an earlier commit, e.g. `git archive REV | tar -x -C DIR`), each
# built in its own directory. Each shape is tuned once with --force into a fresh cache;
# the tuner's info line gives "timing ended T1, verified T2": verification is T2 - T1
# (the float64 reference, the comparison and their copies). Run from the repository root
# on a GPU machine (tools/gpu_build.sh builds this tree). Output: $OUT/verify_time.txt.
set -uo pipefail
base=${1:?usage: dev/verify_time.sh BASE_SRC}
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
(cd "$base" && { [ -d build-base ] || meson setup build-base >/dev/null; } &&
  meson compile -C build-base gemmtune:executable >"$OUT/build-base.log" 2>&1) || { tail -20 "$OUT/build-base.log"; exit 1; }
shapes="${VT_SHAPES:-f32:1100x1000x512 bf16:1100x1000x512 f32:4096x4096x4096 f32:8192x8192x8192 bf16:8192x8192x8192 f64:8192x8192x8192 f32:14336x1x4096 f32:4x8x3000000}"
export GEMMTUNE_TUNE_MAX_CANDIDATES=2 GEMMTUNE_LOG=info
for tree in base new; do
  exe=./$B/gemmtune; [ $tree = base ] && exe=$base/build-base/gemmtune
  for s in $shapes; do
    dt=${s%%:*} sh=${s#*:}
    rm -f "$OUT/vt.db"*
    line=$($exe --cache "$OUT/vt.db" tune --force --dtype "$dt" "$sh" 2>&1 | grep "timing ended" | tail -1)
    t=$(echo "$line" | sed -n 's/.*timing ended \([0-9.]*\), verified \([0-9.]*\).*/\1 \2/p')
    echo "$tree $dt $sh verify_s=$(echo "$t" | awk '{printf "%.3f", $2 - $1}') :: $line"
  done
done | tee "$OUT/verify_time.txt"
