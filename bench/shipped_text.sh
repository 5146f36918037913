#!/usr/bin/env bash
# shipped_text.sh: the H100's shipped file for issue 25's held-out protocol, as a cache
# text: the public suite's tunings (data/defaults/h100.txt) and the training list's
# (bench/train.txt, disjoint from bench/heldout.txt), each of its 56 shapes per type tuned
# with the cost model's first 96 candidates and 5 s, f64 6 s (bench/runs/2026-11-27-h100-
# widetrain-DT.txt for f32, tf32 and bf16, bench/runs/2026-11-28-h100-widetrain-f64.txt,
# made by `bash dev/gpu_dev.sh widetrain`). Each key keeps its fastest KEEP timings
# (default 32, a default tuning's count, as the suite's keys hold) and every failed one
# (`gemmtune merge --keep`): the selector sets each timing against the mean of its shape's
# timings, so shapes timed to different depths would weigh their errors differently.
#
# The f32, tf32 and bf16 training tunings were made under kernel source dbb360f2ff3d106d.
# Between it and abb037e46cf96afc only gemm_dmma.cu changed (m16n8k8 for warp tiles of 32
# fragments; the double-buffered small tiles), so they time the same programs and are
# stamped with the new hash here. The f64 ones were made under be9bfb952e7db0f5, before the
# small tiles were double-buffered, and merge leaves them out (another kernel source) until
# widetrain runs again. Under any other kernel source the script stops.
# Usage: bash bench/shipped_text.sh OUT.txt [KEEP]   (no GPU; after tools/build.sh;
# GEMMTUNE: the gemmtune command, default build/gemmtune)
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/shipped_text.sh OUT.txt [KEEP]}")
keep=${2:-32}
cd "$(dirname "$0")/.."
gt=${GEMMTUNE:-build/gemmtune}
from=dbb360f2ff3d106d to=abb037e46cf96afc
now=$({ "$gt" info 2>/dev/null || true; } | sed -n "s/^kernel source hash: //p")
if [ "$now" != "$to" ]; then
  echo "shipped_text.sh: the kernel source is $now, not $to: the training tunings' stamp is not known to hold" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dt in f32 tf32 bf16; do
  awk -F'\t' -v OFS='\t' -v from="$from" -v to="$to" '$1 == "W" && $3 == from {$3 = to} 1' \
    "bench/runs/2026-11-27-h100-widetrain-$dt.txt" >"$tmp/widetrain-$dt.txt"
done
GEMMTUNE_DEFAULTS=0 "$gt" merge data/defaults/h100.txt "$tmp"/widetrain-{f32,tf32,bf16}.txt \
  bench/runs/2026-11-28-h100-widetrain-f64.txt -o "$out" --text --keep "$keep"
