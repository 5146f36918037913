# kcheck_lib.sh: sourced by dev/kcheck.sh and dev/dmma_s2.sh (configurations through
# dev/kcheck.c), from the repository root. Needs CUDA set (the toolkit's root).
#
# kcheck_build BIN LOG: builds dev/kcheck.c into BIN (optimized for this CPU, else
# plain -O2), compiler output in LOG; exports the toolkit's libraries. Status 2 on failure.
kcheck_build() {
    cc -O3 -march=native -std=c11 -Wall dev/kcheck.c -I"$CUDA/include" -L"$CUDA/lib64" \
        -L"$CUDA/lib64/stubs" -lcuda -lnvrtc -lm -lpthread -o "$1" >"$2" 2>&1 ||
        cc -O2 -std=c11 dev/kcheck.c -I"$CUDA/include" -L"$CUDA/lib64" -L"$CUDA/lib64/stubs" \
            -lcuda -lnvrtc -lm -lpthread -o "$1" >>"$2" 2>&1 ||
        { cat "$2"; return 2; }
    export LD_LIBRARY_PATH=$CUDA/lib64:${LD_LIBRARY_PATH:-}
}
# A configuration is written "BM BN BK WM WN STAGES VEC SPLIT RASTER MINB"; cfgwords
# derives TM = WM/8, TN = WN/8, NACC = TM*TN*2 and the dynamic shared memory (kcheck passes
# it as -DGT_SMEM_CHECK too, and the kernel static_asserts it is its own):
#   smem = STAGES * 8 * ((TA ? BM*(BK+4) : BK*(BM+4)) + (TB ? BK*(BN+4) : BN*(BK+4)))
smem() { # BM BN BK STAGES TA TB
    local a b
    if [ "$5" = 1 ]; then a=$(($1 * ($3 + 4))); else a=$(($3 * ($1 + 4))); fi
    if [ "$6" = 1 ]; then b=$(($3 * ($2 + 4))); else b=$(($2 * ($3 + 4))); fi
    echo $(($4 * 8 * (a + b)))
}
# cfgwords TA TB "BM BN BK WM WN STAGES VEC SPLIT RASTER MINB": kcheck's KEY=VALUE words
cfgwords() {
    local ta=$1 tb=$2
    set -- $3
    local tm=$(($4 / 8)) tn=$(($5 / 8))
    echo "BM=$1 BN=$2 BK=$3 WM=$4 WN=$5 TM=$tm TN=$tn STAGES=$6 VEC=$7 SPLIT=$8 RASTER=$9" \
        "MINB=${10} NACC=$((tm * tn * 2)) SMEM=$(smem $1 $2 $3 $6 $ta $tb)"
}
