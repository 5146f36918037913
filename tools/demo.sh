#!/usr/bin/env bash
# demo.sh: the README's main command. Installs what is missing, builds gemmtune, then
# tunes and runs a GEMM: `gemmtune info`, `gemmtune tune` of a few shapes, and
# `gemmtune run` (random data, checked against the float64 reference, timed).
# Without a GPU it says so plainly and exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh || exit 1
B=${BUILD_DIR:-build}
./$B/gemmtune info || { echo "gemmtune: no GPU here: built, but nothing to tune or run."; exit 1; }
./$B/gemmtune tune 1024x1024x1024 2048x2048x2048 4097x129x257:NT || exit 1
./$B/gemmtune run ${1:-4096x4096x4096}
