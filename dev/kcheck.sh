#!/usr/bin/env bash
# kcheck.sh: build dev/kcheck.c and check and time configurations of the fp64 tensor-core
# kernel family kernel_src/gemm_dmma.cu on this machine's GPU (device 0).
#
# Usage: bash dev/kcheck.sh [all|check|perf|sanitize|sass|cublas|ncu]...   (default: all
# but ncu)
#   check     all four op pairs; odd shapes (1000x999x1001, 129x67x33, 257x255x3001),
#             exact ones (256^3), beta == 0, split-K with odd K; every instruction shape
#             (on sm_90: m16n8k8 where its two fragment buffers fit, m16n8k4 for warp tiles
#             of 32 fragments elsewhere,
#             m8n8k4 where TN is odd)
#   perf      4096x4096x4096, NN (and a few configurations for NT, TN, TT)
#   sanitize  compute-sanitizer memcheck and racecheck on small odd problems
#   sass      the tensor-core instructions ptxas emitted, per instruction shape (cuobjdump)
#   cublas    cuBLAS DGEMM 4096^3 through PyTorch, for comparison
#   ncu       Nsight Compute sections of one 4096^3 configuration (NN and TN), and of
#             cuBLAS's DGEMM at 4096^3 through PyTorch (its kernel's name gives its tile)
# Output: ${OUT:-./kcheck-out}: kcheck.log (every line), sanitize.log, sass.txt,
# cublas.txt, ncu.txt, build.log; a summary is printed last. Exit status 1 if any check failed.
#
# A configuration is written "BM BN BK WM WN STAGES VEC SPLIT RASTER MINB"; the kernel picks
# its instruction from the warp tile and the target (gemm_dmma.cu's MMA);
# dev/kcheck_lib.sh's cfgwords derives TM, TN, NACC and the dynamic shared memory.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/kcheck-out}
mkdir -p "$OUT"
CUDA=${CUDA_PATH:-/usr/local/cuda}
KC=${KCHECK_BIN:-/tmp/kcheck.$$}
SRC=kernel_src/gemm_dmma.cu
LOG=$OUT/kcheck.log
: >"$LOG"
whats=${*:-all}
want() { [[ (" $whats " == *" all "* && $1 != ncu) || " $whats " == *" $1 "* ]]; }

. dev/kcheck_lib.sh
kcheck_build "$KC" "$OUT/build.log" || exit 2

# run M N K opA opB beta0 CFG... : one kcheck process for all configurations
run() {
    local m=$1 n=$2 k=$3 oa=$4 ob=$5 b0=$6
    shift 6
    local ta=0 tb=0 args=()
    [ "$oa" = T ] && ta=1
    [ "$ob" = T ] && tb=1
    for c in "$@"; do args+=($(cfgwords $ta $tb "$c") /); done
    timeout ${KCHECK_TIMEOUT:-150} "$KC" $SRC "$m" "$n" "$k" "$oa" "$ob" f64 "$b0" "${args[@]}" ||
        echo "kcheck $m $n $k $oa$ob beta0=$b0: rc=$?"
}

rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 |
    tee -a "$LOG"

if want check; then
    echo "=== check" | tee -a "$LOG"
    check_op() { # opA opB
        local oa=$1 ob=$2
        #   BM  BN  BK WM WN ST VEC SPLIT RASTER MINB
        run 1000 999 1001 $oa $ob 0 \
            "64 64 16 32 32 3 2 1 1 1" \
            "128 64 8 32 32 4 1 1 1 1" \
            "64 128 32 32 64 2 2 1 4 1" \
            "32 32 8 16 16 3 2 1 1 1" \
            "128 128 16 32 64 3 2 1 8 1" \
            "64 64 16 32 32 3 1 3 1 1" \
            "128 128 16 64 32 4 2 1 1 1" \
            "128 128 16 64 32 3 1 1 8 1" \
            "128 64 8 32 32 3 2 1 1 1" \
            "64 64 32 32 32 2 2 1 1 1" \
            "64 64 16 32 32 3 2 2 1 1" \
            "64 48 16 32 24 3 2 1 1 1"
        run 1000 999 1001 $oa $ob 1 \
            "64 64 16 32 32 3 2 1 1 1" \
            "64 64 16 32 32 3 2 2 1 1" \
            "128 128 16 64 32 4 2 3 1 1"
        run 129 67 33 $oa $ob 0 \
            "32 32 8 16 16 2 1 1 1 1" \
            "64 32 16 32 8 3 2 1 1 1" \
            "16 16 8 8 8 2 2 1 1 1" \
            "32 32 8 16 16 2 2 2 1 1" \
            "32 32 16 8 16 2 2 1 1 1" \
            "32 64 8 16 32 3 1 2 1 1" \
            "64 48 16 32 24 3 2 2 1 1"
        run 257 255 3001 $oa $ob 0 \
            "64 64 16 32 32 3 2 3 1 1" \
            "64 64 32 32 32 4 1 4 1 1" \
            "128 64 16 32 32 3 2 5 1 1"
        run 256 256 256 $oa $ob 0 \
            "128 64 16 32 32 3 2 1 1 1" \
            "64 64 16 32 32 3 2 2 1 1" \
            "128 128 16 64 32 4 2 1 1 1" \
            "128 128 32 64 32 3 2 2 1 1"
    }
    # the four op pairs in parallel (small problems: their timings are not the point)
    for op in "N N" "N T" "T N" "T T"; do
        check_op $op >"$OUT/.check_${op// /}" 2>&1 &
    done
    wait
    for op in NN NT TN TT; do cat "$OUT/.check_$op" >>"$LOG"; rm -f "$OUT/.check_$op"; done
fi

if want perf; then
    echo "=== perf" | tee -a "$LOG"
    #   BM  BN  BK WM WN ST VEC SPLIT RASTER MINB
    PERF_NN=(
        "128 64 16 32 32 3 2 1 1 1"
        "128 64 16 32 32 4 2 1 1 1"
        "128 64 16 32 32 3 2 1 1 2"
        "128 128 16 64 32 4 2 1 1 1"
        "128 128 16 64 32 3 2 1 1 1"
        "128 128 16 64 32 4 2 1 8 1"
        "128 128 16 32 64 4 2 1 1 1"
        "128 128 32 64 32 3 2 1 1 1"
        "64 128 16 32 32 4 2 1 1 1"
        "64 64 16 32 32 4 2 1 1 1"
    )
    run 4096 4096 4096 N N 0 "${PERF_NN[@]}" 2>&1 | tee -a "$LOG"
    PERF_OTHER=(
        "128 64 16 32 32 3 2 1 1 1"
        "128 128 16 64 32 4 2 1 1 1"
    )
    for op in "N T" "T N" "T T"; do
        run 4096 4096 4096 $op 0 "${PERF_OTHER[@]}" 2>&1 | tee -a "$LOG"
    done
fi

if want sass; then
    echo "=== sass" | tee -a "$LOG"
    : >"$OUT/sass.txt"
    # sm_90: m16n8k8 (warp tiles 32x32 and 64x32), m16n8k4 (64x32 in 2 splits: its two
    # fragment buffers of m16n8k8 would spill), m8n8k4 (32x24: TN odd)
    i=0
    for c in "128 64 16 32 32 3 2 1 1 1" "128 128 16 64 32 4 2 1 1 1" "128 128 16 64 32 4 2 2 1 1" \
        "64 48 16 32 24 3 2 1 1 1"; do
        i=$((i + 1))
        KCHECK_NOTIME=1 "$KC" $SRC 256 256 256 N N f64 0 $(cfgwords 0 0 "$c") DUMP=/tmp/kc_$$_$i.cubin >/dev/null
        {
            echo "--- $c (NN 256^3):"
            "$CUDA/bin/cuobjdump" -sass /tmp/kc_$$_$i.cubin |
                grep -oE "(DMMA|LDS|LDGSTS|BAR|DFMA|LDL|STL)[.A-Z0-9x]*" | sort | uniq -c
        } >>"$OUT/sass.txt" 2>&1
        rm -f /tmp/kc_$$_$i.cubin
    done
    cat "$OUT/sass.txt" | tee -a "$LOG"
fi

if want cublas; then
    echo "=== cublas" | tee -a "$LOG"
    python3 - >"$OUT/cublas.txt" 2>&1 <<'EOF'
import torch
n = 4096
a = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
b = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
c = torch.empty(n, n, dtype=torch.float64, device="cuda")
# torch is row-major: c = a @ b is the column-major C^T = B^T A^T, an NN cuBLAS call;
# a transposed view makes the matching operand transposed.
for name, x, y in (("NN", a, b), ("NT", a, b.t()), ("TN", a.t(), b), ("TT", a.t(), b.t())):
    for _ in range(3):
        torch.matmul(x, y, out=c)
    ts = []
    for _ in range(20):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); torch.matmul(x, y, out=c); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    med = 0.5 * (ts[9] + ts[10])
    print("cublas dgemm %dx%dx%d %s (torch layout): median %.1f us, %.2f TFLOP/s"
          % (n, n, n, name, med * 1e3, 2 * n**3 / (med * 1e-3) / 1e12))
EOF
    cat "$OUT/cublas.txt" | tee -a "$LOG"
fi

if want sanitize; then
    echo "=== sanitize" | tee -a "$LOG"
    CS=$(command -v compute-sanitizer || echo "$CUDA/bin/compute-sanitizer")
    {
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool memcheck --error-exitcode 9 "$KC" $SRC 129 67 33 N T f64 0 \
            $(cfgwords 0 1 "32 32 8 16 16 2 1 1 1 1") / $(cfgwords 0 1 "32 32 8 16 16 2 2 2 1 1")
        echo "memcheck 129x67x33 NT rc=$?"
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool memcheck --error-exitcode 9 "$KC" $SRC 257 255 301 T T f64 1 \
            $(cfgwords 1 1 "64 64 32 32 32 4 1 3 1 1") / $(cfgwords 1 1 "64 128 32 32 64 2 2 1 4 1")
        echo "memcheck 257x255x301 TT beta0 rc=$?"
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool racecheck --error-exitcode 9 "$KC" $SRC 129 67 33 T N f64 0 \
            $(cfgwords 1 0 "32 32 8 16 16 2 2 2 1 1") / $(cfgwords 1 0 "32 32 8 16 16 3 2 1 1 1")
        echo "racecheck 129x67x33 TN rc=$?"
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool memcheck --error-exitcode 9 "$KC" $SRC 129 67 33 T T f64 0 \
            $(cfgwords 1 1 "32 64 8 16 32 3 1 2 1 1") / $(cfgwords 1 1 "32 32 16 8 16 2 2 1 1 1")
        echo "memcheck 129x67x33 TT rc=$?"
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool racecheck --error-exitcode 9 "$KC" $SRC 129 67 33 N T f64 0 \
            $(cfgwords 0 1 "32 64 8 16 32 3 2 2 1 1")
        echo "racecheck 129x67x33 NT rc=$?"
        KCHECK_NOTIME=1 timeout 60 "$CS" --tool synccheck --error-exitcode 9 "$KC" $SRC 129 67 33 N N f64 0 \
            $(cfgwords 0 0 "32 32 8 16 16 3 2 2 1 1")
        echo "synccheck 129x67x33 NN rc=$?"
    } >"$OUT/sanitize.log" 2>&1
    grep -E "rc=|ERROR SUMMARY|FAIL" "$OUT/sanitize.log" | tee -a "$LOG"
fi

if want ncu; then
    echo "=== ncu" | tee -a "$LOG"
    NCU=$(command -v ncu || echo "$CUDA/bin/ncu")
    for c in "N N|128 128 16 64 32 4 2 1 1 1" "T N|128 128 16 64 32 4 2 1 1 1"; do
        op=${c%%|*}
        cfg=${c#*|}
        set -- $op
        ta=0 tb=0
        [ "$1" = T ] && ta=1
        [ "$2" = T ] && tb=1
        KCHECK_NOTIME=1 timeout 60 "$NCU" --clock-control none -k gt_gemm -c 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
            --section Occupancy --section ComputeWorkloadAnalysis \
            --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_ldgsts.sum,lts__t_bytes.sum.per_second,dram__bytes.sum.per_second,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_dmma.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active \
            "$KC" $SRC 4096 4096 4096 $1 $2 f64 0 $(cfgwords $ta $tb "$cfg") >>"$OUT/ncu.txt" 2>&1
        echo "ncu $op rc=$?" | tee -a "$LOG"
    done
    # cuBLAS's DGEMM at 4096^3 (through PyTorch), the same sections and metrics
    cat >"$OUT/ncu_cublas.py" <<'EOF'
import torch
n = 4096
a = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
b = torch.rand(n, n, dtype=torch.float64, device="cuda") * 2 - 1
c = torch.empty(n, n, dtype=torch.float64, device="cuda")
for _ in range(3):
    torch.matmul(a, b, out=c)
torch.cuda.synchronize()
EOF
    timeout 120 "$NCU" --clock-control none -k regex:"gemm|xmma" -c 1 \
        --section SpeedOfLight --section WarpStateStats --section Occupancy \
        --metrics sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_dmma.sum,smsp__inst_executed.sum \
        python3 "$OUT/ncu_cublas.py" >>"$OUT/ncu.txt" 2>&1
    echo "ncu cublas rc=$?" | tee -a "$LOG"
    grep -E "Duration|Throughput|Bandwidth|bank_conflicts|wavefronts|dmma|Warp Cycles|Issued|Achieved Occ|L2 Hit|Stall|lts__t_bytes|dram__bytes|Registers|inst_executed" "$OUT/ncu.txt" | head -100
fi

echo "=== summary"
npass=$(grep -c " PASS " "$LOG")
nfail=$(grep -cE " FAIL|rc=[1-9]" "$LOG")
echo "pass $npass, fail $nfail"
grep -E " FAIL|rc=[1-9]" "$LOG" | head -30
[ "$nfail" = 0 ] || rc=1
if grep -q "^4096x4096x4096" "$LOG"; then
    echo "fastest 4096^3 per op pair (TFLOP/s):"
    for op in NN NT TN TT; do
        grep "^4096x4096x4096:$op " "$LOG" | grep " PASS " |
            sed -E 's/.*TFLOPs=([0-9.]+).*/\1 &/' | sort -rn | head -3 | cut -d' ' -f2- |
            sed -E 's/(RASTER|MINB|NACC|SMEM)=[0-9]+,?//g; s/ maxabs=[^ ]+//; s/ occ=/ occ=/'
    done
fi
rm -f "$KC"
exit $rc
