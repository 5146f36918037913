#!/usr/bin/env bash
# dmma_k8.sh: GPU. What did m16n8k8 for DMMA warp tiles of 32 fragments (gemm_dmma.cu's
# FITS_K8) buy? dev/kcheck.c times the same configurations from the tree's kernel source and
# from a copy with m16n8k4 for every warp tile of 32 fragments (FITS_K8 = TM * TN < 32, the
# rule before it), on 4096^3 (NN, NT, TN) and on shapes with edges, each
# checked against float64 and relaunched bit for bit; then dev/dmma_bits.cu (m16n8k8 against
# two m16n8k4, bit for bit). bench/runs/2026-11-27-h100-dmmak8-kcheck.txt has the H100's.
# Usage: bash dev/dmma_k8.sh   (needs nvcc; OUT: logs, default ./dmmak8-out)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/dmmak8-out}
mkdir -p "$OUT"
export CUDA=${CUDA_PATH:-/usr/local/cuda}
. dev/kcheck_lib.sh
kcheck_build /tmp/kc.$$ "$OUT/build.log" || exit 2
before=$(mktemp -d)
trap 'rm -rf "$before" /tmp/kc.$$ /tmp/dmma_bits.$$' EXIT
awk '/^constexpr bool FITS_K8 = / {print "constexpr bool FITS_K8 = TM * TN < 32;"; skip = 1; next}
     skip && /;$/ {skip = 0; next} !skip' kernel_src/gemm_dmma.cu >"$before/gemm_dmma.cu"
grep -q "^constexpr bool FITS_K8 = TM \* TN < 32;$" "$before/gemm_dmma.cu" || { echo "dmma_k8.sh: no FITS_K8 to replace"; exit 2; }
cp kernel_src/common.cuh kernel_src/types.cuh "$before/"
#      BM  BN  BK WM WN ST VEC SPLIT RASTER MINB
CFGS=("128 128 16 32 64 3 2 1 8 1" "128 128 16 64 32 3 2 1 8 1" "128 128 16 64 32 4 2 1 8 1"
      "128 64 16 64 32 3 2 1 8 1" "256 64 16 64 32 3 2 1 8 1" "64 128 16 32 64 3 2 1 8 1")
rc=0
for shape in "4096 4096 4096 N N" "4096 4096 4096 N T" "4096 4096 4096 T N" "5000 5000 5000 N N" \
             "3000 3000 3000 N N" "1021 1021 1021 N T" "2048 16384 4096 N T"; do
  set -- $shape
  ta=0 tb=0; [ "$4" = T ] && ta=1; [ "$5" = T ] && tb=1
  args=(); for c in "${CFGS[@]}"; do args+=($(cfgwords $ta $tb "$c") /); done
  for src in "$before" kernel_src; do
    which=after; [ "$src" = "$before" ] && which=before
    timeout 200 /tmp/kc.$$ "$src/gemm_dmma.cu" "$@" f64 0 "${args[@]}" 2>&1 |
      sed -E "s/^/$which /; s/,?(NACC|SMEM|VEC|SPLIT|MINB)=[0-9]+//g; s/ maxabs=[^ ]+//" | tee -a "$OUT/kcheck.txt"
  done
done
grep -q FAIL "$OUT/kcheck.txt" && rc=1
nvcc -arch=sm_90 -o /tmp/dmma_bits.$$ dev/dmma_bits.cu && /tmp/dmma_bits.$$ | tee "$OUT/bits.txt" || rc=1
grep -q " 0 of " "$OUT/bits.txt" || rc=1
exit $rc
