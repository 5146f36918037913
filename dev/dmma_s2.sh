#!/usr/bin/env bash
# dmma_s2.sh: does the two-stage DMMA fault (the reason for tuner/kcfg.c's `dmma_stages`
# constraint: f64 DMMA kernels with two shared-memory stages computed wrong results)
# still show? Checked with dev/kcheck.c on the library's kernel source and on a variant
# directory given as $VARIANT (a copy of kernel_src/ with one change), each configuration
# twice (two seeds; kcheck also relaunches and compares bits). Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
CUDA=${CUDA_PATH:-/usr/local/cuda}
KC=/tmp/kcheck.$$
. dev/kcheck_lib.sh
kcheck_build "$KC" "$OUT/kcheck-build.log" || exit 2
# "M N K|BM BN BK WM WN STAGES VEC SPLIT RASTER MINB" (dev/kcheck_lib.sh's cfgwords), all NT:
# the failing two-stage configurations, then the same with three stages or no split.
CASES=(
  "300 200 40001|32 256 16 32 64 2 2 24 1 1"
  "300 200 40001|32 128 16 32 64 2 2 24 1 1"
  "300 200 40001|32 256 16 32 64 2 2 48 1 1"
  "300 200 40001|32 256 16 32 64 3 2 24 1 1"
  "300 200 4001|32 256 16 32 64 2 2 4 1 1"
  "300 200 4001|32 256 16 32 64 2 2 1 1 1"
)
# Or DMMA_S2_CASES="M N K|CFG;M N K|CFG;..."
[ -n "${DMMA_S2_CASES:-}" ] && IFS=';' read -ra CASES <<<"$DMMA_S2_CASES"
for src in kernel_src/gemm_dmma.cu ${VARIANT:+$VARIANT/gemm_dmma.cu}; do
  for c in "${CASES[@]}"; do
    shape=${c%%|*}; cfg=${c#*|}
    for seed in 1 2; do
      echo "--- $src $shape NT [$cfg] seed $seed" >>"$OUT/dmma_s2.log"
      KCHECK_NOTIME=1 KCHECK_SEED=$seed timeout 120 "$KC" $src $shape N T f64 0 $(cfgwords 0 1 "$cfg") >>"$OUT/dmma_s2.log" 2>&1
      echo "$src $shape [$cfg] seed $seed rc=$?"
    done
  done
done
grep -E "PASS|FAIL|---" "$OUT/dmma_s2.log" | cut -c1-200 | tail -80
rm -f "$KC"
