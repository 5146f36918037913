#!/usr/bin/env bash
# variants.sh: time kernel variants side by side on this machine's GPU. Each variant is a
# copy of the tree with one named edit of dev/variants.py applied; each copy is built,
# tunes SHAPE with a fresh cache twice and prints its fastest candidates' times (the
# tuner's debug log). "base" is the tree as it is.
# Usage: OUT=dir bash dev/variants.sh DTYPE SHAPE[,SHAPE...] VARIANT...
# (GEMMTUNE_TUNE_* apply: a large GEMMTUNE_TUNE_BUDGET_S and MAX_CANDIDATES time more;
# TOP: candidates printed per run, default 6.)
set -uo pipefail
cd "$(dirname "$0")/.."
# The project's device machine lacks SQLite's headers: .device/prep.sh installs them.
if [ -f .device/prep.sh ] && ! pkg-config --exists sqlite3 2>/dev/null; then bash .device/prep.sh; fi
OUT=${OUT:-$PWD/variants-out}
mkdir -p "$OUT"
dt=$1 shape=$2
shift 2
for v in "$@"; do
  d=/tmp/variant-$v
  python3 dev/variants.py "$d" "$v" || { echo "variant $v: edit failed"; continue; }
  (cd "$d" && meson setup b >/dev/null 2>&1 && meson compile -C b gemmtune:executable >"$OUT/build-$v.log" 2>&1) ||
    { echo "variant $v: build failed"; tail -20 "$OUT/build-$v.log"; continue; }
  rm -f "$OUT/v-$v.db"*
  for s in ${shape//,/ }; do
    for i in 1 2; do
      echo "== $v $s ($i)"
      GEMMTUNE_LOG=debug "$d/b/gemmtune" --cache "$OUT/v-$v.db" tune --force --dtype "$dt" "$s" 2>&1 |
        grep -o "candidate .* timed: .*" | sort -t: -k2 -n | head -${TOP:-6}
    done
  done
done
