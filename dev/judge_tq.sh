#!/usr/bin/env bash
# judge_tq.sh: GPU. Does a change to the tuner's ranking (a dev/*.patch) help issue 27's
# tuning quality? On one machine, in one run: the tree as it is and a copy with PATCH
# applied, each built; per type of $TQ_DTYPES (default f32), each tree runs
# tools/gpu_run.sh tunequality with $TQ_RUNS (default "hist none") over $TQ_FILE (default
# bench/heldout_tq.txt), the two trees one after the other, and bench/tune_quality.py sets
# each against the reference searches in $JT_REF (default
# bench/runs/2026-11-26-h100-tunequality-show.txt, 400 candidates and 20 s per shape).
# $JT_REPEAT (default 1) repeats the whole, the trees alternating, for the runs' spread.
# Usage: bash dev/judge_tq.sh PATCH ; logs to $OUT (default ./gpu-out), each tree's show
# file and table in $OUT/base and $OUT/patched. On the project's device machine: copy
# ../shared/device to .device first (SQLite headers) and carry it.
set -uo pipefail
patch_file=$(realpath "${1:?usage: bash dev/judge_tq.sh PATCH}")
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
ref=$(realpath "${JT_REF:-bench/runs/2026-11-26-h100-tunequality-show.txt}")
rc=0
tree=/tmp/judge-tq-patched
rm -rf "$tree" && mkdir -p "$tree"
tar --exclude='./build*' --exclude=./.git --exclude=./.device --exclude='./*-out' -cf - . | tar -xf - -C "$tree"
(cd "$tree" && patch -p1 --quiet <"$patch_file") || { echo "judge_tq: $patch_file does not apply"; exit 1; }
(cd "$tree" && meson setup build-gpu >"$OUT/jt-setup.log" 2>&1 && meson compile -C build-gpu >"$OUT/jt-build.log" 2>&1) ||
  { echo "judge_tq: the patched tree does not build"; tail -30 "$OUT/jt-build.log"; exit 1; }
for rep in $(seq "${JT_REPEAT:-1}"); do
for dt in ${TQ_DTYPES:-f32}; do
  for which in base patched; do
    dir=.; [ "$which" = patched ] && dir=$tree
    mkdir -p "$OUT/$which"
    (cd "$dir" && OUT="$OUT/$which/$dt-$rep" TQ_DTYPES="$dt" TQ_RUNS="${TQ_RUNS:-hist none}" \
      TQ_FILE="${TQ_FILE:-bench/heldout_tq.txt}" bash tools/gpu_run.sh tunequality >"$OUT/$which/tq-$dt-$rep.log" 2>&1) || rc=1
    show=$OUT/$which/$dt-$rep/tq-show.txt
    [ -f "$show" ] || { echo "$which $dt: no show file"; rc=1; continue; }
    python3 bench/tune_quality.py "$show" "$ref" >"$OUT/$which/tq-$dt-$rep.md" || rc=1
    echo "== $which $dt run $rep"
    grep "default budget with history" "$OUT/$which/tq-$dt-$rep.md" | grep "^$dt:"
  done
done
done
exit $rc
