#!/usr/bin/env bash
# gpu_dev.sh: development measurements on a machine with an NVIDIA GPU (not tests: each
# answers a question about the tuner or the kernels; tools/gpu_run.sh holds the suites and
# the bench). Builds gemmtune in build-gpu as tools/gpu_run.sh does, then:
#   space         does the ranking miss better candidates? Each of $SPACE_SHAPES tuned
#                 with every candidate the space keeps timed, then the 15 fastest
#   mma3          are f32_3xtf32's MMA kernels right, and how fast? A tree whose model
#                 ranks them first (dev/variants.py mma3first) tunes $MMA3_SHAPES with
#                 every candidate verified, then memcheck on $MMA3_MEMCHECK
#   profile-tc    where does bf16 4096^3 lose to cuBLAS? Every candidate's time, a K sweep
#                 beside cuBLAS, Nsight Compute on both libraries' kernels
#   profile-simt  why do the FFMA kernels miss cuBLAS on skinny, flat and large-K shapes?
#                 Nsight Compute metrics of our winner and cuBLAS's kernels per shape,
#                 summarized by dev/ncu_summary.py
#   classcost     what does a narrow alignment class cost a product? Each pair of
#                 $CC_PAIRS ("narrow/padded ...": an odd shape and the nearest one whose
#                 every leading dimension is 16-byte aligned) tuned from a fresh cache with
#                 the same budget ($CC_BUDGET s, 64 candidates) and run, per $CC_DTYPES
#   selprobe      what does mode cached run for shapes no cache holds, and what would the
#                 tuner find? Each of $SP_SHAPES (f32 held-out outliers) in mode cached
#                 from the built-in defaults (the selector's choice in the log, its time
#                 beside cuBLAS), then each of $SP_TUNE tuned with 64 candidates and every
#                 candidate's time shown
#   readfloor     how fast can one launch read a decode step's weight? dev/readfloor.cu:
#                 pure reads of 33.6 MB, 117 MB and 1 GB, timed as the bench times a GEMM,
#                 over loads in flight, cache hints, block sizes and blocks per SM; then
#                 GEMVs of bf16 4096 and 14336 x 4096 weights that walk rows the same way
#   raster        what does the rasterization group cost where the model rates the groups
#                 alike? Each configuration of $RS_CONFIGS (without its _rN) at each group
#                 of $RS_RASTERS, stored as the winner of every shape of $RS_SHAPES (a cache
#                 text imported into a fresh cache), run by gemmtune-bench in mode cached
#   configs       how fast is each configuration of $CF_CONFIGS (exact or generic, _g1) on
#                 the shapes of $CF_SHAPES, data type $CF_DTYPE? Stored and run as raster's
#   widetrain     what is the best a shape of the training list can get? Each shape of
#                 $WT_FILE (default bench/train.txt) tuned from a fresh cache with the cost
#                 model's first $WT_CAND (96) candidates and $WT_BUDGET (5) s, per type of
#                 $WT_DTYPES (f64), exported as a cache text ($OUT/widetrain-DTYPE.txt)
#                 for dev/select_loo.c's LOO_WIDE
# Usage: bash dev/gpu_dev.sh space|mma3|profile-tc|profile-simt|classcost|selprobe|readfloor|
# raster|configs|widetrain ; logs to $OUT (default ./gpu-out). On the project's device
# machine: copy ../shared/device to .device first (SQLite headers) and carry it.
set -uo pipefail
what=${1:-}
case "$what" in
space | mma3 | profile-tc | profile-simt | classcost | selprobe | readfloor | raster | configs | widetrain) ;;
*) sed -n 2,41p "$0"; exit 2 ;;
esac
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
rc=0
if [ "$what" = readfloor ]; then
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  $NVCC -O3 -arch=sm_90 -o "$OUT/readfloor" dev/readfloor.cu && "$OUT/readfloor" >"$OUT/readfloor.txt" 2>&1 || rc=1
  grep -E "empty|^==|^BEST" "$OUT/readfloor.txt"
  rm -f "$OUT/readfloor"
fi
# as_winner DTYPE CONFIG SHAPES TAG: CONFIG stored as the winner of every shape of SHAPES
# (a cache text imported into a fresh cache; each key's alignment class as the bench's
# leading dimensions give it), then run by gemmtune-bench in mode cached; a line per shape
# to $OUT/TAG.txt.
as_winner() {
  local dt=$1 c=$2 shapes=$3 tag=$4
  for s in $shapes; do d=${s%%:*} ops=${s#*:}; echo "${d//x/ } ${ops:0:1} ${ops:1:1}"; done >"$OUT/$tag-shapes.txt"
  python3 - "$dt" "$c" "$hash" "$gpu" "$sms" $shapes >"$OUT/$tag-$c.txt" <<'PY'
import sys
dt, cfg, hsh, gpu, sms = sys.argv[1:6]
size_in = {"f64": 8, "f32": 4, "tf32": 4, "f32_3xtf32": 4}.get(dt, 2)
size_out = {"f16": 2, "bf16": 2}.get(dt, size_in)
def align(ld, es):
    a = 16
    while a > 1 and (ld * es) % a:
        a //= 2
    return a
print("gemmtune-cache-text\t1")
for s in sys.argv[6:]:
    d, ops = s.split(":")
    m, n, k = (int(x) for x in d.split("x"))
    lda = k if ops[0] == "T" else m
    ldb = n if ops[1] == "T" else k
    a = min(align(lda, size_in), align(ldb, size_in), align(m, size_out))
    print("W\t%s|sm90|%s|%s|%s|%s|a%d|b1\t%s\t0\t%s\t100\t1\t-\t-\tdev\t0\t0.1.0" % (gpu, sms, dt, ops, d, a, hsh, cfg))
    print("T\t%s\tok\t100\t1\t-" % cfg)
PY
  rm -f "$OUT/aw.db"*
  ./$B/gemmtune --cache "$OUT/aw.db" import "$OUT/$tag-$c.txt" >>"$OUT/$tag.log" 2>&1 || rc=1
  GEMMTUNE_MODE=cached GEMMTUNE_DEFAULTS=0 GEMMTUNE_CACHE="$OUT/aw.db" ./$B/gemmtune-bench --no-lt \
    --dtype "$dt" --file "$OUT/$tag-shapes.txt" --json "$OUT/$tag-$c.json" >>"$OUT/$tag.log" 2>&1 || rc=1
  python3 - "$OUT/$tag-$c.json" "$c" <<'PY' | tee -a "$OUT/$tag.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["shapes"]:
    print("%-26s %-44s %9.1f us  cuBLAS %9.1f us  source %s" % ("%dx%dx%d:%s%s" % (r["m"], r["n"], r["k"], r["opa"], r["opb"]),
          sys.argv[2], r["gt_us"], r["cublas_us"], r.get("source")))
PY
  rm -f "$OUT/aw.db"*
}
if [ "$what" = raster ] || [ "$what" = configs ]; then
  hash=$(./$B/gemmtune info | sed -n 's/^kernel source hash: //p')
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  sms=$(./$B/gemmtune info | sed -n 's/^GPU 0: .*, \([0-9]*\) SMs.*/\1/p')
fi
if [ "$what" = raster ]; then
  shapes=${RS_SHAPES:-"11008x4096x1024:TN 11008x4096x2048:TN 11008x4096x3000:TN 11008x4096x4096:TN 11008x4096x6144:TN 4096x11008x3000:TN 4096x4096x11008:TN"}
  for cfg in ${RS_CONFIGS:-f3_128x256x64_w128x128_t2x2_s4_v8_k1 f3_128x256x64_w128x128_t1x2_s4_v8_k1}; do
    for r in ${RS_RASTERS:-1 4 8 16}; do
      as_winner "${RS_DTYPE:-bf16}" "${cfg}_r$r" "$shapes" raster
    done
  done
fi
if [ "$what" = configs ]; then
  for cfg in $CF_CONFIGS; do
    as_winner "${CF_DTYPE:-f32}" "$cfg" "$CF_SHAPES" configs
  done
fi
if [ "$what" = widetrain ]; then
  for dt in ${WT_DTYPES:-f64}; do
    rm -f "$OUT/wt.db"*
    GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/wt.db" tune --file "${WT_FILE:-bench/train.txt}" \
      --candidates "${WT_CAND:-96}" --budget "${WT_BUDGET:-5}" --dtype "$dt" >"$OUT/widetrain-$dt.log" 2>&1 || rc=1
    GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/wt.db" export --text -o "$OUT/widetrain-$dt.txt" >>"$OUT/widetrain-$dt.log" 2>&1 || rc=1
    echo "widetrain $dt: $(grep -c '^W' "$OUT/widetrain-$dt.txt") keys, $(grep -c '^T' "$OUT/widetrain-$dt.txt") timings"
  done
  rm -f "$OUT/wt.db"*
fi
if [ "$what" = classcost ]; then
  # The narrow class's cost: time(narrow) / time(padded) - 1 against stage.c's narrow_loss.
  pairs=${CC_PAIRS:-"4099x257x3001:TT/4104x264x3008:TT 997x1009x1013:TT/1000x1016x1016:TT 1021x1021x1021:NT/1024x1024x1024:NT 123x4567x891:NN/128x4568x896:NN 7x15360x5121:NT/8x15360x5120:NT"}
  for dt in ${CC_DTYPES:-f32 bf16}; do
    for p in $pairs; do
      for s in ${p%/*} ${p#*/}; do
        rm -f "$OUT/cc.db"*
        t=$(GEMMTUNE_DEFAULTS=0 GEMMTUNE_TUNE_BUDGET_S=${CC_BUDGET:-4} GEMMTUNE_TUNE_MAX_CANDIDATES=64 \
          ./$B/gemmtune --cache "$OUT/cc.db" run --dtype "$dt" --reps 20 "$s" 2>&1 | grep '^time:')
        echo "classcost $dt $s $t" | tee -a "$OUT/classcost.txt"
      done
    done
  done
  rm -f "$OUT/cc.db"*
fi
if [ "$what" = selprobe ]; then
  printf '%s\n' ${SP_SHAPES:-"4099 257 3001 T T" "123 4567 891 N N" "997 1009 1013 T T" \
    "10000 200 200 T N" "32 4096 14336 N T" "77 128256 4096 N T" "12544 64 147 N N"} >"$OUT/sp-shapes.txt"
  rm -f "$OUT/sp.db"*
  GEMMTUNE_LOG=info GEMMTUNE_MODE=cached GEMMTUNE_CACHE="$OUT/sp.db" GEMMTUNE_DEFAULTS=1 \
    ./$B/gemmtune-bench --no-lt --dtype "${SP_DTYPE:-f32}" --file "$OUT/sp-shapes.txt" >"$OUT/selprobe-bench.txt" 2>&1 || rc=1
  grep -E "selected|^ +[0-9]+ " "$OUT/selprobe-bench.txt"
  for s in ${SP_TUNE:-4099x257x3001:TT 4104x264x3008:TT 123x4567x891:NN 128x4568x896:NN 10000x200x200:TN 32x4096x14336:NT}; do
    rm -f "$OUT/sp.db"*
    GEMMTUNE_DEFAULTS=0 GEMMTUNE_TUNE_BUDGET_S=5 GEMMTUNE_TUNE_MAX_CANDIDATES=64 \
      ./$B/gemmtune --cache "$OUT/sp.db" tune --dtype "${SP_DTYPE:-f32}" "$s" >/dev/null 2>&1 || rc=1
    echo "=== $s" >>"$OUT/selprobe-show.txt"
    GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/sp.db" show --dtype "${SP_DTYPE:-f32}" "$s" >>"$OUT/selprobe-show.txt" 2>&1
  done
  rm -f "$OUT/sp.db"*
fi
if [ "$what" = space ]; then
  # Whether the ranking misses better candidates: each of $SPACE_SHAPES ("dtype:shape ...")
  # tuned with every candidate the space keeps timed (no budget), then the 15 fastest.
  # The built-in defaults off: a shape they hold would count as tuned and be skipped.
  export GEMMTUNE_TUNE_BUDGET_S=100000 GEMMTUNE_TUNE_MAX_CANDIDATES=${SPACE_MAX:-400} GEMMTUNE_DEFAULTS=0
  rm -f "$OUT/space.db"*
  for ds in ${SPACE_SHAPES:-f64:65536x64x64 f32:65536x64x64 f64:1024x1024x1024 f32:256x256x65536 f64:256x256x65536}; do
    dt=${ds%%:*} s=${ds#*:}
    ./$B/gemmtune --cache "$OUT/space.db" tune --dtype "$dt" "$s" >>"$OUT/space.log" 2>&1 || rc=1
    ./$B/gemmtune --cache "$OUT/space.db" show --dtype "$dt" "$s" >"$OUT/space_${dt}_${s/:/_}.txt" 2>&1
    echo "== $dt $s: $(grep -c ' ok ' "$OUT/space_${dt}_${s/:/_}.txt") timed"; grep ' ok ' "$OUT/space_${dt}_${s/:/_}.txt" | sort -k3 -n | head -15
  done
fi
if [ "$what" = mma3 ]; then
  # f32_3xtf32's MMA kernels (mma.sync, low parts split in registers): a tree whose model
  # ranks them first (dev/variants.py mma3first) tunes $MMA3_SHAPES with every candidate
  # verified (a wrong one shows as verify_failed), then the $MMA3_TOP (8) fastest of each;
  # then the odd shapes of MMA3_MEMCHECK (empty: none)' candidates under memcheck.
  # MMA3_VARIANTS: further edits of dev/variants.py on top ("-": none).
  for v in ${MMA3_VARIANTS:--}; do
  d=/tmp/variant-mma3first
  python3 dev/variants.py "$d" mma3first ${v#-} || { rc=1; continue; }
  (cd "$d" && meson setup b >/dev/null 2>&1 && meson compile -C b >"$OUT/build-mma3.log" 2>&1) || { tail -20 "$OUT/build-mma3.log"; exit 1; }
  rm -f "$OUT/mma3.db"*
  export GEMMTUNE_TUNE_VERIFY_ALL=1 GEMMTUNE_TUNE_BUDGET_S=100000 GEMMTUNE_TUNE_MAX_CANDIDATES=${MMA3_MAX:-40}
  for s in ${MMA3_SHAPES:-16384x128x1024:NN 128x4096x4096:NT 256x256x65536:NN 1024x1024x32768:NN 4096x4096x4096:NN 65536x64x64:NN 1001x999x1003:TT 77x46x130:TN}; do
    "$d/b/gemmtune" --cache "$OUT/mma3.db" tune --dtype f32_3xtf32 "$s" >>"$OUT/mma3.log" 2>&1 || rc=1
    "$d/b/gemmtune" --cache "$OUT/mma3.db" show --dtype f32_3xtf32 "$s" >"$OUT/mma3_${v}_$s.txt" 2>&1
    echo "== variant $v $s: $(grep -c ' ok ' "$OUT/mma3_${v}_$s.txt") ok, $(grep -c verify_failed "$OUT/mma3_${v}_$s.txt") verify_failed, $(grep -c -E 'compile_failed|launch_failed' "$OUT/mma3_${v}_$s.txt") failed"
    grep -E ' ok |verify_failed' "$OUT/mma3_${v}_$s.txt" | sort -k3 -n | head -${MMA3_TOP:-8}
  done
  done
  for s in ${MMA3_MEMCHECK-77x46x130:TN 255x257x31:NT 1000x999x1001:NN}; do
    GEMMTUNE_TUNE_MAX_CANDIDATES=24 compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$d/b/gemmtune" --cache "$OUT/mma3-memcheck.db" run --reps 1 --dtype f32_3xtf32 $s >>"$OUT/mma3-memcheck.log" 2>&1
    r=$?; echo "memcheck f32_3xtf32 MMA $s: exit $r"; [ $r -eq 0 ] || rc=1
  done
  grep -E "ERROR SUMMARY" "$OUT/mma3-memcheck.log" 2>/dev/null | sort | uniq -c
  unset GEMMTUNE_TUNE_VERIFY_ALL GEMMTUNE_TUNE_BUDGET_S GEMMTUNE_TUNE_MAX_CANDIDATES
fi
if [ "$what" = profile-tc ]; then
  # Where bf16 4096^3 loses to cuBLAS: every candidate's time (show), a K sweep of
  # 4096 x 4096 x K side by side with cuBLAS (a fixed cost per tile shows as the intercept
  # of time against K), then Nsight Compute on one run of each library's 4096^3 kernel
  # (clocks left alone).
  P="$OUT/profile.db"
  rm -f "$P"*
  ./$B/gemmtune --cache "$P" tune --dtype bf16 4096x4096x4096 || rc=1
  ./$B/gemmtune --cache "$P" show --dtype bf16 4096x4096x4096 >"$OUT/show_4096.txt" 2>&1
  head -40 "$OUT/show_4096.txt"
  GEMMTUNE_CACHE="$P" ./$B/gemmtune-bench --dtype bf16 --file bench/ksweep.txt \
    --json "$OUT/ksweep.json" 2>&1 | tee "$OUT/ksweep.txt" || rc=1
  echo "4096 4096 4096 N N" >"$OUT/one.txt"
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for who in gt_gemm 'regex:nvjet|sm90|xmma|cutlass|gemm_'; do
    GEMMTUNE_CACHE="$P" $NCU --clock-control none --kernel-name "$who" --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum.per_second,l1tex__m_xbar2l1tex_read_bytes.sum.per_second \
      ./$B/gemmtune-bench --dtype bf16 --file "$OUT/one.txt" >>"$OUT/ncu.txt" 2>&1
  done
  grep -E "gt_gemm|nvjet|sm90|Duration|SM Frequency|Throughput|gmma|lts__t_bytes|xbar2l1tex|Registers|Shared Memory Config|Stall|Issued|Eligible|Active Warps|No Eligible|Block Size|Grid Size|==PROF==|==ERROR==|==WARNING==" "$OUT/ncu.txt" | head -120
fi
if [ "$what" = profile-simt ]; then
  # Why the exact-fp32 (FFMA) kernels miss 1.3x cuBLAS on the skinny, flat and large-K
  # shapes: each of $PROF_SHAPES tuned (fresh cache, default budget), then Nsight Compute
  # on one launch of our winner and of cuBLAS's kernels (split-K reduce included), clocks
  # left alone: time, SM and DRAM throughput, FMA pipe use, issue rate, occupancy,
  # registers and the warp stall reasons per issued instruction.
  P="$OUT/profile-simt.db"
  rm -f "$P"* "$OUT/ncu-simt.txt"
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  ST=smsp__average_warps_issue_stalled
  MET=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum
  for x in long_scoreboard short_scoreboard barrier mio_throttle math_pipe_throttle wait not_selected lg_throttle dispatch_stall no_instruction selected; do
    MET=$MET,${ST}_${x}_per_issue_active.ratio
  done
  for s in ${PROF_SHAPES:-16384x128x1024:NN 128x16384x1024:NN 128x4096x4096:NT 256x256x65536:NN 1024x1024x32768:NN 65536x64x64:NN 16x4096x4096:NT 4096x4096x4096:NN}; do
    ./$B/gemmtune --cache "$P" tune --dtype f32 "$s" >/dev/null 2>&1 || rc=1
    for who in 'regex:^gt_gemm$' 'regex:sgemm|xmma|cutlass|nvjet|sm80|sm90|splitK|gemv|gemmk|Kernel'; do
      echo "=== $s $who" >>"$OUT/ncu-simt.txt"
      GEMMTUNE_CACHE="$P" $NCU --clock-control none --kernel-name "$who" --launch-skip 3 --launch-count 2 \
        --metrics "$MET" ./$B/gemmtune-bench --dtype f32 --warmup 3 --reps 5 "$s" >>"$OUT/ncu-simt.txt" 2>&1 || rc=1
    done
  done
  python3 dev/ncu_summary.py "$OUT/ncu-simt.txt" | tee "$OUT/ncu-simt-summary.txt"
fi
exit $rc
