#!/usr/bin/env bash
# kcheck_simt.sh: check and time configurations of the SIMT family (kernel_src/gemm_simt.cu,
# or SRC=path) with tools/kcheck.c on this machine's GPU, configurations given in the
# library's text form.
#
# Usage: bash tools/kcheck_simt.sh M N K OPS f32|f64 CONFIG[@MINB]...
#   OPS: NN, NT, TN or TT. CONFIG: e.g. f0_128x128x16_w32x64_t8x8_s3_v4_k1_r8; @MINB sets
#   the launch bound's minimum blocks per SM (default 1).
# Shared memory follows src/kcfg.c: STAGES x BK x (BM + BN + 4 per operand stored with k
# contiguous) elements. Prints kcheck's line per configuration (PASS/FAIL, error, us,
# TFLOP/s, registers, spills, occupancy).
set -uo pipefail
cd "$(dirname "$0")/.."
CUDA=${CUDA_PATH:-/usr/local/cuda}
KC=${KCHECK_BIN:-/tmp/kcheck_simt.$$}
SRC=${SRC:-kernel_src/gemm_simt.cu}
[ $# -ge 6 ] || { sed -n 5,12p "$0"; exit 2; }
m=$1 n=$2 k=$3 ops=$4 dt=$5
shift 5
. tools/kcheck_lib.sh
if [ -x "$KC" ]; then
    export LD_LIBRARY_PATH=$CUDA/lib64:${LD_LIBRARY_PATH:-}
else
    kcheck_build "$KC" "/tmp/kcheck_simt_build.$$.log" || exit 2
fi
ta=0 tb=0
[ "${ops:0:1}" = T ] && ta=1
[ "${ops:1:1}" = T ] && tb=1
es=4
[ "$dt" = f64 ] && es=8
args=()
for c in "$@"; do
    minb=1
    [[ $c == *@* ]] && minb=${c#*@} && c=${c%@*}
    IFS='_x' read -r f bm bn bk w1 wn t1 tn s v kk r <<<"$c"
    fam=${f#f} wm=${w1#w} tm=${t1#t} st=${s#s} vec=${v#v} split=${kk#k} raster=${r#r}
    lda=$((bm + (ta ? 4 : 0))) ldb=$((bn + (tb ? 0 : 4)))
    smem=$((st * bk * (lda + ldb) * es))
    args+=(FAM=$fam BM=$bm BN=$bn BK=$bk WM=$wm WN=$wn TM=$tm TN=$tn STAGES=$st VEC=$vec
        SPLIT=$split RASTER=$raster MINB=$minb SMEM=$smem NACC=$((tm * tn)) /)
done
"$KC" "$SRC" "$m" "$n" "$k" "${ops:0:1}" "${ops:1:1}" "$dt" 0 "${args[@]}"
rc=$?
[ -n "${KCHECK_BIN:-}" ] || rm -f "$KC"
exit $rc
