#!/usr/bin/env bash
# dmma_swap.sh: GPU. Exact DMMA kernels with double-buffered fragments computed wrong results
# on some small warp tiles (bench/README.md, "Exact DMMA kernels with small warp tiles"). Is
# the cause a fragment load left in flight across the K step's barrier? Before the change the
# last instruction group's fragments were read before the barrier and used after it, so
# another warp's copies into that stage (zero-filled ones land at once) could overtake a
# load still queued. This script checks, on one machine:
#   1. the source before the change with every exact kernel double-buffered (the control:
#      the fault should show), and the tree's source with every exact kernel
#      double-buffered, over dev/dmma_sweep.py's tiles and shapes ($DSW_CFGS: a
#      configuration list, one per line, as dev/dmma_sweep.py reads it);
#   2. the time of tiles that the rule before the change kept single-buffered, and of tiles
#      it double-buffered, under the source before the change and the tree's source
#      (dev/kcheck.c: 20 launches, median, each run checked against float64).
# Usage: bash dev/dmma_swap.sh BEFORE.cu   (BEFORE.cu: gemm_dmma.cu before the change, e.g.
#        git show 0eaeaeb:kernel_src/gemm_dmma.cu > /tmp/before.cu); OUT: logs, default
#        ./dmmaswap-out. DSW_SEEDS: sweep seeds (default "1"); DSW_SWEEPS: which sources
#        to sweep (default "before_db after_db"; empty: none). Needs dev/sass.c built
#        (its header; /tmp/sass, or DSW_SASS), which dev/dmma_sweep.py reads too (DS_SASS).
set -uo pipefail
before_src=$(realpath "${1:?usage: bash dev/dmma_swap.sh BEFORE.cu}")
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/dmmaswap-out}
mkdir -p "$OUT"
export CUDA=${CUDA_PATH:-/usr/local/cuda}
. dev/kcheck_lib.sh
kcheck_build /tmp/kc "$OUT/build.log" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/before" "$tmp/before_db" "$tmp/after_db"
for d in before before_db after_db; do cp kernel_src/common.cuh kernel_src/types.cuh "$tmp/$d/"; done
cp "$before_src" "$tmp/before/gemm_dmma.cu"
cp kernel_src/gemm_dmma.cu "$tmp/after_db/gemm_dmma.cu"
sed -E 's/^( *constexpr bool FRAG_DB = ).*;$/\1!GT_GENERIC;/' "$before_src" >"$tmp/before_db/gemm_dmma.cu"
sed -i -E 's/^( *constexpr bool FRAG_DB = ).*;$/\1!GT_GENERIC;/' "$tmp/after_db/gemm_dmma.cu"
for d in before_db after_db; do
  grep -q "constexpr bool FRAG_DB = !GT_GENERIC;" "$tmp/$d/gemm_dmma.cu" || { echo "dmma_swap.sh: no FRAG_DB in $d"; exit 2; }
done
rc=0
cfgs=${DSW_CFGS:-}
[ -z "${DSW_SWEEPS-x}" ] || [ -n "$cfgs" ] || { echo "dmma_swap.sh: DSW_CFGS: the configuration list to sweep"; exit 2; }
for seed in ${DSW_SEEDS:-1}; do
  for d in ${DSW_SWEEPS:-before_db after_db}; do
    echo "=== sweep $d, seed $seed" | tee -a "$OUT/sweep.txt"
    KCHECK_SEED=$seed DS_SASS="${DSW_SASS:-/tmp/sass}" DS_SRC="$tmp/$d/gemm_dmma.cu" python3 dev/dmma_sweep.py "$cfgs" 2>&1 | tail -25 | tee -a "$OUT/sweep.txt"
  done
done
# Timing: "M N K opA opB | BM BN BK WM WN STAGES VEC SPLIT RASTER"; the block-count bound
# the library gives the configuration (dev/sass.c's SASS_OPTS, $DSW_SASS, default /tmp/sass).
while IFS='|' read -r shape cfg; do
  [ -n "$shape" ] || continue
  set -- $cfg
  text=f1_$1x$2x$3_w$4x$5_t$(($4 / 8))x$(($5 / 8))_s$6_v$7_k$8_r$9
  set -- $shape
  minb=$(echo "f64 $1x$2x$3:$4$5 16 0 $text" | SASS_OPTS=1 "${DSW_SASS:-/tmp/sass}" | grep -o 'GT_MINB=[0-9]*' | cut -d= -f2)
  [ -n "$minb" ] || { echo "dmma_swap.sh: no launch bound for $text (${DSW_SASS:-/tmp/sass})"; rc=1; continue; }
  cfg="$cfg $minb"
  ta=0 tb=0; [ "$4" = T ] && ta=1; [ "$5" = T ] && tb=1
  for d in before after_db; do
    src=$tmp/$d/gemm_dmma.cu; [ "$d" = after_db ] && src=kernel_src/gemm_dmma.cu && d=after
    timeout 120 /tmp/kc "$src" "$@" f64 0 $(cfgwords $ta $tb "$cfg") 2>&1 |
      sed -E "s/^/$d /; s/,?(NACC|SMEM)=[0-9]+//g; s/ maxabs=[^ ]+//" | tee -a "$OUT/time.txt"
  done
done <<'EOF'
3072 768 3072 N T|96 96 32 24 48 4 2 1 1
3072 768 3072 N T|96 64 16 24 32 3 2 1 8
392 512 4608 N N|80 128 32 40 32 3 2 6 1
392 512 4608 N N|80 64 16 40 32 4 2 6 1
4096 64 1024 N N|32 64 32 16 16 4 2 1 1
1024 128 1024 N N|32 32 32 8 16 4 2 1 1
1024 128 1024 N N|48 64 32 24 16 4 2 3 1
1024 128 1024 N N|64 64 16 16 16 4 2 4 1
1000 999 1001 T T|48 64 32 24 16 3 2 1 1
7 15360 5120 N T|16 64 32 8 16 4 2 1 1
1568 256 2304 N N|96 128 16 48 32 3 2 3 1
2048 2048 2048 N N|64 64 16 32 32 3 2 1 1
4096 4096 4096 N N|128 128 16 32 64 3 2 1 8
4096 4096 4096 N N|128 128 16 64 32 3 2 1 8
3000 3000 3000 N N|64 64 16 32 32 3 2 1 8
EOF
grep -q FAIL "$OUT/time.txt" && rc=1
exit $rc
