#!/usr/bin/env bash
# shipped_text.sh: the H100's shipped file for issue 25's held-out protocol, as a cache
# text: the public suite's tunings (data/defaults/h100.txt) and the training list's
# (bench/train.txt, disjoint from bench/heldout.txt), each of its 56 shapes per type tuned
# with the cost model's first 96 candidates and 5 s (bench/runs/2026-11-27-h100-widetrain-
# DT.txt, made by `bash dev/gpu_dev.sh widetrain`). Each key keeps its fastest KEEP timings
# (default 32, a default tuning's count, as the suite's keys hold) and every failed one
# (`gemmtune merge --keep`): the selector sets each timing against the mean of its shape's
# timings, so shapes timed to different depths would weigh their errors differently.
# Usage: bash bench/shipped_text.sh OUT.txt [KEEP]   (no GPU; after tools/build.sh;
# GEMMTUNE: the gemmtune command, default build/gemmtune)
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/shipped_text.sh OUT.txt [KEEP]}")
keep=${2:-32}
cd "$(dirname "$0")/.."
GEMMTUNE_DEFAULTS=0 "${GEMMTUNE:-build/gemmtune}" merge data/defaults/h100.txt \
  bench/runs/2026-11-27-h100-widetrain-{f32,f64,tf32,bf16}.txt -o "$out" --text --keep "$keep"
