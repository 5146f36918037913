#!/usr/bin/env bash
# gpu_run.sh: on a machine with an NVIDIA GPU, build gemmtune (tools/gpu_build.sh) and run
# one of:
#   all         every test (the GPU ones for real), a few `gemmtune run` checks, memcheck
#               and bench
#   tests       every test but the sweep and multigpu suites;  gpu: the tests that need the
#               GPU (gpu, cluster, cli, mode, verify, capture, generic, gemv, dropin_gpu);
#               verify: the verifier's alone
#   sweep       the sweep suite: tunings with every candidate timed and verified, and
#               every candidate of test_nvrtc's sets compiled (nvrtc_all)
#   multigpu    the multigpu suite: two GPUs driven at once by two threads (run it on a
#               machine with two; with one it is skipped)
#   heldout     bench/heldout.txt in mode cached, from a file tuned on bench/suite.txt and
#               from no file at all (the selector), against cuBLAS; the node's generic
#               kernels built first (gemmtune prebuild, for the classes the list's calls
#               fall in: $HELDOUT_PREBUILD_ARGS, default --ops NN,NT,TN,TT --beta zero),
#               unless HELDOUT_PREBUILD=0
#   defaults    the built-in defaults' file of this GPU (gemmtune defaults on
#               bench/suite.txt, $DEFAULTS_DTYPES, default f32 bf16 f64 tf32) into
#               $OUT/defaults.txt, to copy to data/defaults/
#   capture-memcheck  test_capture (CUDA Graph capture, many streams, gt_set_workspace)
#               under compute-sanitizer's memcheck, but for the one case the tool breaks
#   quick       a few `gemmtune run` checks, a second process from the cache
#   memcheck, memcheck-tc, wgmma, dmma-edges   every candidate of odd shapes verified,
#               under compute-sanitizer where named
#   bench       gemmtune-bench against cuBLAS and cuBLASLt, $BENCH_DTYPES (default f32
#               f64) on $BENCH_FILE (default bench/suite.txt), each with a fresh cache
#   bench-tc    the same for $TC_DTYPES (default bf16 f16 tf32)
#   devices     tune --devices on one GPU against all, shards and merge
#   decode      bench/decode.txt (byte-bound shapes; $DECODE_FILE instead) against cuBLAS,
#               $DECODE_DTYPES (default bf16 f16 f32 f64), each with a fresh cache:
#               decode_DT.json and decode.txt
#   tunequality  issue 27's evidence: per shape of $TQ_FILE (default bench/heldout.txt) and
#               $TQ_DTYPES (default f32 bf16), the default budget with the public suite's
#               tunings as history, with an empty cache, and the reference search $TQ_REF
#               (default --exhaustive), each from its own cache ($TQ_RUNS: which of the
#               three, default all); bench/tune_quality.py's table in tune_quality.md
#               (exhaustive: hours, overnight)
#   dropin      PyTorch without and with LD_PRELOAD=libgemmtune_cublas.so
#               (bench/dropin_torch.py): results compared, the layer stack timed both ways
#   python      the Python package's tests (python/tests: PyTorch tensors against
#               torch.matmul where PyTorch is installed)
#   gemv-memcheck  byte-bound odd shapes tuned with every candidate verified, under
#               compute-sanitizer's memcheck ($GEMV_MC_DTYPES, default f32 f64 bf16 f16)
# Development measurements (not tests) are in dev/gpu_dev.sh. Logs and JSON go to $OUT
# (default ./gpu-out). On the project's device machine: copy ../shared/device to .device
# first (SQLite headers) and carry it.
set -uo pipefail
what=${1:-all}
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
rc=0
if [ "$what" = all ] || [ "$what" = tests ]; then
  meson test -C $B --print-errorlogs --no-suite sweep --no-suite multigpu >"$OUT/test.log" 2>&1 || rc=1
  cp $B/meson-logs/testlog.txt "$OUT/testlog.txt" 2>/dev/null
  grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" "$OUT/test.log"
  grep -E "^not ok|FAILED" $B/meson-logs/testlog.txt | head -40
fi
if [ "$what" = gpu ] || [ "$what" = sweep ] || [ "$what" = verify ] || [ "$what" = multigpu ]; then
  case $what in
    gpu) suites="gpu cluster cli mode verify capture generic gemv dropin_gpu" ;;
    verify) suites="verify" ;;
    multigpu) suites="--suite multigpu" ;;
    *) suites="--suite sweep" ;;
  esac
  # shellcheck disable=SC2086  # the list splits into words on purpose
  meson test -C $B --print-errorlogs $suites >"$OUT/test.log" 2>&1 || rc=1
  cp $B/meson-logs/testlog.txt "$OUT/testlog.txt" 2>/dev/null
  grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" "$OUT/test.log"
  grep -E "^not ok|FAILED|^# " $B/meson-logs/testlog.txt | head -80
fi
if [ "$what" = all ] || [ "$what" = quick ]; then
  ./$B/gemmtune info
  for s in 4096x4096x4096 1000x1000x1000:TN 4097x129x257:NT 16x4096x4096:NT; do
    ./$B/gemmtune run $s || rc=1
  done
  echo "--- second process, same shapes: from the cache"
  ./$B/gemmtune run 4096x4096x4096 || rc=1
  ./$B/gemmtune list
fi
if [ "$what" = all ] || [ "$what" = memcheck ] || [ "$what" = memcheck-tc ]; then
  # Every candidate of each shape runs under memcheck while it is tuned (fresh cache; no
  # time budget, so that none is dropped). 33x65x2049 brings split-K candidates.
  export GEMMTUNE_TUNE_BUDGET_S=100000
  rm -f "$OUT/memcheck.db"*
  # memcheck-tc: only the tensor-core types below.
  [ "$what" = memcheck-tc ] && simt_shapes="" || simt_shapes="17x33x65:TN 129x1x7:NT 255x257x31:TT 1000x999x1001:NN 33x65x2049:NT"
  for s in $simt_shapes; do
    compute-sanitizer --tool memcheck --error-exitcode 9 \
      ./$B/gemmtune --cache "$OUT/memcheck.db" run --reps 1 $s >>"$OUT/memcheck.log" 2>&1
    r=$?; echo "memcheck $s: exit $r"; [ $r -eq 0 ] || rc=1
  done
  # The same odd shapes in double precision (gemm_tuned_d, its own cache keys).
  for s in $simt_shapes; do
    compute-sanitizer --tool memcheck --error-exitcode 9 \
      ./$B/gemmtune --cache "$OUT/memcheck.db" run --reps 1 --dtype f64 $s >>"$OUT/memcheck.log" 2>&1
    r=$?; echo "memcheck f64 $s: exit $r"; [ $r -eq 0 ] || rc=1
  done
  # The tensor-core types (MMA family), every candidate also checked against the reference
  # (GEMMTUNE_TUNE_VERIFY_ALL: a wrong one shows as verify_failed in the counts below).
  export GEMMTUNE_TUNE_VERIFY_ALL=1
  for dt in ${MEMCHECK_TC_DTYPES:-bf16 f16 tf32 f16_f32}; do
    for s in 17x33x65:TN 255x257x31:TT 1000x999x1001:NN 33x65x2049:NT; do
      compute-sanitizer --tool memcheck --error-exitcode 9 \
        ./$B/gemmtune --cache "$OUT/memcheck.db" run --reps 1 --dtype $dt $s >>"$OUT/memcheck.log" 2>&1
      r=$?; echo "memcheck $dt $s: exit $r"; [ $r -eq 0 ] || rc=1
    done
  done
  unset GEMMTUNE_TUNE_VERIFY_ALL
  grep -E "ERROR SUMMARY|check:" "$OUT/memcheck.log"
  # How many candidates ran under memcheck, per shape and outcome.
  sqlite3 "$OUT/memcheck.db" "select dtype, m, n, k, status, count(*) from timings group by 1,2,3,4,5" 2>/dev/null ||
    python3 -c "import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute('select dtype,m,n,k,status,count(*) from timings group by 1,2,3,4,5')]" "$OUT/memcheck.db"
fi
if [ "$what" = capture-memcheck ]; then
  # test_capture (graphs captured and replayed, eager calls beside them, an application
  # workspace, 200 streams) under memcheck: an access outside a workspace or a graph's own
  # allocation is an error. Left out: capture_from_another_thread, whose capture memcheck
  # itself invalidates (in every capture mode, relaxed too, with no driver call of the
  # library failing) while another thread tunes; it passes without the tool.
  TAP_EXCEPT=capture_from_another_thread compute-sanitizer --tool memcheck --error-exitcode 9 \
    ./$B/tests/test_capture >"$OUT/capture-memcheck.log" 2>&1
  r=$?; echo "memcheck test_capture: exit $r"; [ $r -eq 0 ] || rc=1
  grep -E "^not ok|FAILED|ERROR SUMMARY" "$OUT/capture-memcheck.log" | head -40
fi
if [ "$what" = heldout ]; then
  # Shapes not tuned (issue 25's protocol): bench/suite.txt tuned into a file shipped
  # read-only, then bench/heldout.txt in mode cached, each from a fresh user cache, against
  # cuBLAS's default (--no-lt): "shipped", that file on GEMMTUNE_CACHE_PATH and the
  # built-in defaults off; "none", no cache file at all but the built-in defaults (a fresh
  # install); "bare", neither (the cost model alone). $HELDOUT_DTYPES (default f32 bf16);
  # $HELDOUT_SHIPPED: a file to ship instead of tuning one; $HELDOUT_SHIPPED_TEXT: a cache
  # text imported into the file to ship instead (bench/shipped_text.sh's, the suite and the
  # training list); $HELDOUT_SHIPS: which runs
  # (default "shipped none"); $HELDOUT_NODE: the node's cache of generic kernels, kept
  # between runs (default a fresh one in $OUT, removed after).
  S=${HELDOUT_SHIPPED:-$OUT/shipped.db}
  if [ -n "${HELDOUT_SHIPPED_TEXT:-}" ]; then
    S=$OUT/shipped.db # never the file HELDOUT_SHIPPED names: it is removed first
    rm -f "$S"*
    ./$B/gemmtune --cache "$S" import "$HELDOUT_SHIPPED_TEXT" >>"$OUT/heldout.txt" 2>&1 || rc=1
  elif [ -z "${HELDOUT_SHIPPED:-}" ]; then
    rm -f "$S"*
    for dt in ${HELDOUT_DTYPES:-f32 bf16}; do
      GEMMTUNE_DEFAULTS=0 GEMMTUNE_CACHE=$S ./$B/gemmtune tune --file bench/suite.txt --dtype "$dt" >>"$OUT/heldout.txt" 2>&1 || rc=1
    done
  fi
  # The node's generic kernels (one user cache for every run: binaries, no winners),
  # built from each run's layers before it; each run's user cache starts as its copy.
  node=${HELDOUT_NODE:-$OUT/node.db}
  [ -n "${HELDOUT_NODE:-}" ] || rm -f "$node"*
  for dt in ${HELDOUT_DTYPES:-f32 bf16}; do
    for ship in ${HELDOUT_SHIPS:-shipped none}; do
      rm -f "$OUT/fresh.db"*
      path=; [ "$ship" = shipped ] && path=$S
      defaults=0; [ "$ship" = none ] && defaults=1
      if [ "${HELDOUT_PREBUILD:-1}" = 1 ]; then
        GEMMTUNE_CACHE="$node" GEMMTUNE_CACHE_PATH="$path" GEMMTUNE_DEFAULTS=$defaults \
          ./$B/gemmtune prebuild --dtype "$dt" ${HELDOUT_PREBUILD_ARGS:---ops NN,NT,TN,TT --beta zero} >>"$OUT/prebuild.txt" 2>&1 || rc=1
        tail -1 "$OUT/prebuild.txt"
        cp "$node" "$OUT/fresh.db"
      fi
      echo "=== $dt, mode cached, shipped file: ${path:-none}, built-in defaults: $defaults, prebuilt: ${HELDOUT_PREBUILD:-1}" | tee -a "$OUT/heldout.txt"
      GEMMTUNE_MODE=cached GEMMTUNE_CACHE="$OUT/fresh.db" GEMMTUNE_CACHE_PATH="$path" GEMMTUNE_DEFAULTS=$defaults \
        ./$B/gemmtune-bench --no-lt --dtype "$dt" --file bench/heldout.txt \
        --json "$OUT/heldout-$ship-$dt.json" >>"$OUT/heldout.txt" 2>&1 || rc=1
      tail -14 "$OUT/heldout.txt"
    done
  done
  rm -f "$OUT/fresh.db"*
  [ -n "${HELDOUT_NODE:-}" ] || rm -f "$node"*
fi
if [ "$what" = dropin ]; then
  so=$(find $B -maxdepth 1 -name 'libgemmtune_cublas.so' | head -1)
  python3 bench/dropin_torch.py "$OUT/without.pt" 2>&1 | tee "$OUT/dropin.txt" || rc=1
  GEMMTUNE_LOG=info LD_PRELOAD="$PWD/$so" python3 bench/dropin_torch.py "$OUT/with.pt" >>"$OUT/dropin.txt" 2>"$OUT/dropin-log.txt" || rc=1
  tail -1 "$OUT/dropin.txt"
  echo "shapes served by gemmtune: $(grep -c ': gemmtune$' "$OUT/dropin-log.txt"), by cuBLAS: $(grep -c ': cuBLAS' "$OUT/dropin-log.txt")"
  python3 bench/dropin_torch.py --compare "$OUT/without.pt" "$OUT/with.pt" | tee -a "$OUT/dropin.txt" || rc=1
fi
if [ "$what" = python ]; then
  meson test -C $B --print-errorlogs python >"$OUT/python.log" 2>&1 || rc=1
  grep -E "^(not )?ok|^# " $B/meson-logs/testlog.txt | head -60
fi
if [ "$what" = tunequality ]; then
  # Every run compiles cold: the CUDA driver's compute cache (~/.nv/ComputeCache) returns
  # a program that an earlier process compiled 10 to 30 times faster on the H100 machine,
  # which would give each shape's later runs more of the budget than its first.
  export CUDA_CACHE_DISABLE=1
  echo "# reference: ${TQ_REF:---exhaustive}" >"$OUT/tq-show.txt"
  : >"$OUT/tq.log"
  for dt in ${TQ_DTYPES:-f32 bf16}; do
    rm -f "$OUT/hist.db"*
    GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/hist.db" tune --file bench/suite.txt --dtype "$dt" >>"$OUT/tq.log" 2>&1 || rc=1
    grep -v '^#' "${TQ_FILE:-bench/heldout.txt}" | while read -r m n k a b; do
      [ -n "$m" ] || continue
      s="${m}x${n}x${k}:$a$b"
      for run in ${TQ_RUNS:-hist none ref}; do
        rm -f "$OUT/tq.db"*
        [ "$run" = hist ] && cp "$OUT/hist.db" "$OUT/tq.db"
        extra=""; [ "$run" = ref ] && extra=${TQ_REF:---exhaustive}
        # shellcheck disable=SC2086  # extra is empty or a few words
        GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/tq.db" tune --dtype "$dt" $extra "$s" >>"$OUT/tq.log" 2>&1
        echo "=== $dt $s $run" >>"$OUT/tq-show.txt"
        GEMMTUNE_DEFAULTS=0 ./$B/gemmtune --cache "$OUT/tq.db" show --dtype "$dt" "$s" >>"$OUT/tq-show.txt" 2>&1
      done
    done
  done
  rm -f "$OUT/tq.db"* "$OUT/hist.db"*
  python3 bench/tune_quality.py "$OUT/tq-show.txt" | tee "$OUT/tune_quality.md" || rc=1
fi
if [ "$what" = defaults ]; then
  dts=""; for dt in ${DEFAULTS_DTYPES:-f32 bf16 f64 tf32}; do dts="$dts --dtype $dt"; done
  # shellcheck disable=SC2086  # the list splits into words on purpose
  ./$B/gemmtune defaults --file bench/suite.txt $dts -o "$OUT/defaults.txt" >"$OUT/defaults.log" 2>&1 || rc=1
  tail -3 "$OUT/defaults.log"; grep -c "^W" "$OUT/defaults.txt"
fi
if [ "$what" = dmma-edges ]; then
  # f64 DMMA tiles whose last row or column of tiles leaves whole warps idle (admitted by
  # warp_not_idle when they are under 1/16 of the grid): every candidate
  # of odd shapes in each op pair checked against the reference (GEMMTUNE_TUNE_VERIFY_ALL;
  # a wrong one shows as verify_failed), then the candidates of $DMMA_MEMCHECK under memcheck.
  export GEMMTUNE_TUNE_VERIFY_ALL=1 GEMMTUNE_TUNE_BUDGET_S=100000
  rm -f "$OUT/dmma-edges.db"*
  for s in ${DMMA_SHAPES:-1000x999x1001:NN 1000x999x1001:TT 777x555x333:TN 1500x700x300:NT 600x1000x257:NN 3001x2999x64:NN}; do
    ./$B/gemmtune --cache "$OUT/dmma-edges.db" run --reps 1 --dtype f64 $s >>"$OUT/dmma-edges.log" 2>&1
    r=$?; echo "dmma-edges f64 $s: exit $r"; [ $r -eq 0 ] || rc=1
  done
  for s in ${DMMA_MEMCHECK-777x555x333:TN 600x1000x257:NN}; do
    compute-sanitizer --tool memcheck --error-exitcode 9 \
      ./$B/gemmtune --cache "$OUT/dmma-edges-mc.db" run --reps 1 --dtype f64 $s >>"$OUT/dmma-edges-mc.log" 2>&1
    r=$?; echo "memcheck f64 $s: exit $r"; [ $r -eq 0 ] || rc=1
  done
  unset GEMMTUNE_TUNE_VERIFY_ALL GEMMTUNE_TUNE_BUDGET_S
  grep -E "ERROR SUMMARY" "$OUT/dmma-edges-mc.log" 2>/dev/null | sort | uniq -c
  python3 -c "import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute('select m,n,k,opa,opb,substr(config,1,2),status,count(*) from timings group by 1,2,3,4,5,6,7')]" "$OUT/dmma-edges.db"
fi
if [ "$what" = wgmma ] || [ "$what" = memcheck-tc ]; then
  # The Hopper WGMMA family: every candidate of each shape verified against the float64
  # reference (a wrong one shows as verify_failed below), all op pairs; the shapes keep
  # the leading dimensions multiples of 8 (TMA) and put the odd size where each op pair
  # allows it. Then the SASS of a winner, which must show HGMMA.
  export GEMMTUNE_TUNE_VERIFY_ALL=1 GEMMTUNE_TUNE_BUDGET_S=100000
  rm -f "$OUT/wgmma.db"*
  W="./$B/gemmtune --cache $OUT/wgmma.db"
  [ "$what" = memcheck-tc ] && W="compute-sanitizer --tool memcheck --error-exitcode 9 $W"
  for dt in ${WGMMA_DTYPES:-bf16 f16 f16_f32 bf16_f32}; do
    for s in 1000x999x1000:NN 1000x1000x999:NT 1000x999x1000:TN 1000x1000x1000:TT 4096x4096x4096:NN 64x4096x256:NT 4096x40x4096:TN 4095x4095x4095:NN 1001x999x1003:TT 999x1001x1003:NT; do
      $W run --reps 3 --dtype $dt $s >>"$OUT/wgmma.log" 2>&1
      r=$?; echo "wgmma $dt $s: exit $r"; [ $r -eq 0 ] || rc=1
    done
  done
  # tf32 and f32_3xtf32 (WGMMA_TF32_DTYPES): operands stored without k contiguous are
  # read from transposed copies.
  for dt in ${WGMMA_TF32_DTYPES:-tf32 f32_3xtf32}; do
    for s in ${WGMMA_TF32_SHAPES:-1000x999x1000:NN 1000x1000x999:NT 1000x999x1000:TN 1000x1000x1000:TT 4096x4096x4096:NN 4096x4096x4096:TN 4095x4095x4095:NN 1001x999x1003:TT}; do
      $W run --reps 3 --dtype $dt $s >>"$OUT/wgmma.log" 2>&1
      r=$?; echo "wgmma $dt $s: exit $r"; [ $r -eq 0 ] || rc=1
    done
  done
  unset GEMMTUNE_TUNE_VERIFY_ALL GEMMTUNE_TUNE_BUDGET_S
  grep -E "ERROR SUMMARY|check:|TFLOP" "$OUT/wgmma.log" | head -80
  python3 - "$OUT/wgmma.db" "$OUT" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("select dtype, m, n, k, opa, opb, substr(config,1,2), status, count(*), min(time_us) from timings group by 1,2,3,4,5,6,7,8"):
    print(*r)
for r in db.execute("select dtype, m, n, k, opa, opb, config, time_us, tflops from winners"):
    print("winner", *r)
row = db.execute("select image from cubins where program like '%f3_%' limit 1").fetchone()
if row:
    open(sys.argv[2] + "/wgmma.cubin", "wb").write(row[0])
PY
  if [ -f "$OUT/wgmma.cubin" ]; then
    cuobjdump -sass "$OUT/wgmma.cubin" > "$OUT/wgmma.sass" 2>&1 || nvdisasm "$OUT/wgmma.cubin" > "$OUT/wgmma.sass" 2>&1
    echo "SASS of a WGMMA kernel: $(grep -c HGMMA "$OUT/wgmma.sass") HGMMA, $(grep -c -E ' HMMA' "$OUT/wgmma.sass") HMMA"
    grep -m3 HGMMA "$OUT/wgmma.sass"
  fi
fi
# bench_suite PNG DTYPE...: $BENCH_FILE for each dtype in turn, each with a fresh cache, so
# the cold column is real tuning time; bench_DT.txt/.json and winners_DT.txt per dtype,
# then one chart of the ratio to cuBLAS and to cuBLASLt's best per shape, in PNG.
BENCH_FILE=${BENCH_FILE:-bench/suite.txt}
bench_suite() {
  local png=$1 dt
  shift
  local plot_in=()
  for dt in "$@"; do
    rm -f "$OUT/bench-cache-$dt.db"* "$OUT/bench_$dt.json"
    GEMMTUNE_DEFAULTS=0 GEMMTUNE_CACHE="$OUT/bench-cache-$dt.db" ./$B/gemmtune-bench --dtype "$dt" --file "$BENCH_FILE" \
      --json "$OUT/bench_$dt.json" 2>&1 | tee "$OUT/bench_$dt.txt" || rc=1
    [ -s "$OUT/bench_$dt.json" ] && plot_in+=("$OUT/bench_$dt.json")
    # The winner of each shape, for the record next to the table.
    ./$B/gemmtune --cache "$OUT/bench-cache-$dt.db" list >"$OUT/winners_$dt.txt" 2>&1
    # Every timed candidate of every shape (what the tuner saw), for the analysis.
    grep -v '^#' "$BENCH_FILE" | while read -r m n k a b; do
      [ -n "$m" ] && ./$B/gemmtune --cache "$OUT/bench-cache-$dt.db" show --dtype "$dt" "${m}x${n}x${k}:$a$b"
    done >"$OUT/show_$dt.txt" 2>&1
  done
  if [ ${#plot_in[@]} -gt 0 ]; then
    python3 bench/plot.py --ref both "$png" "${plot_in[@]}" || rc=1
  fi
}
if [ "$what" = all ] || [ "$what" = bench ]; then
  # shellcheck disable=SC2086  # the list splits into words on purpose
  bench_suite "$OUT/bench_ratio.png" ${BENCH_DTYPES:-f32 f64}
fi
if [ "$what" = bench-tc ]; then
  # shellcheck disable=SC2086
  bench_suite "$OUT/bench_tc_ratio.png" ${TC_DTYPES:-bf16 f16 tf32}
fi
if [ "$what" = decode ]; then
  for dt in ${DECODE_DTYPES:-bf16 f16 f32 f64}; do
    rm -f "$OUT/decode-cache.db"*
    GEMMTUNE_DEFAULTS=0 GEMMTUNE_CACHE="$OUT/decode-cache.db" ./$B/gemmtune-bench --dtype "$dt" \
      --file "${DECODE_FILE:-bench/decode.txt}" --json "$OUT/decode_$dt.json" >>"$OUT/decode.txt" 2>&1 || rc=1
    grep -v '^#' "${DECODE_FILE:-bench/decode.txt}" | while read -r m n k a b; do
      [ -n "$m" ] && ./$B/gemmtune --cache "$OUT/decode-cache.db" show --dtype "$dt" "${m}x${n}x${k}:$a$b"
    done >>"$OUT/decode-show.txt" 2>&1
  done
  rm -f "$OUT/decode-cache.db"*
  python3 bench/decode_report.py "$OUT"/decode_*.json | tee "$OUT/decode.md" || rc=1
fi
if [ "$what" = gemv-memcheck ]; then
  # Every candidate of each shape (GEMV ones among them) under memcheck and checked
  # against the reference while it is tuned (fresh cache, no budget).
  export GEMMTUNE_TUNE_VERIFY_ALL=1 GEMMTUNE_TUNE_BUDGET_S=100000
  rm -f "$OUT/gemv-mc.db"*
  for dt in ${GEMV_MC_DTYPES:-f32 f64 bf16 f16}; do
    for s in ${GEMV_MC_SHAPES:-777x1x1001:TN 5x515x777:NT 1x999x1003:NN 4x8x20001:NN 1003x3x517:TT}; do
      compute-sanitizer --tool memcheck --error-exitcode 9 \
        ./$B/gemmtune --cache "$OUT/gemv-mc.db" run --reps 1 --dtype $dt $s >>"$OUT/gemv-mc.log" 2>&1
      r=$?; echo "memcheck $dt $s: exit $r"; [ $r -eq 0 ] || rc=1
    done
  done
  unset GEMMTUNE_TUNE_VERIFY_ALL GEMMTUNE_TUNE_BUDGET_S
  grep -E "ERROR SUMMARY" "$OUT/gemv-mc.log" | sort | uniq -c
  python3 -c "import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute('select dtype,m,n,k,opa,opb,substr(config,1,2),status,count(*) from timings group by 1,2,3,4,5,6,7,8')]" "$OUT/gemv-mc.db"
  rm -f "$OUT/gemv-mc.db"*
fi
if [ "$what" = devices ]; then
  # The same shape list tuned on GPU 0 alone, then on every GPU; then two shards into two
  # files merged into one. Fresh caches each time, so every shape really tunes.
  L=bench/cluster_shapes.txt
  rm -f "$OUT"/dev-*.db*
  t0=$(date +%s.%N)
  ./$B/gemmtune --cache "$OUT/dev-one.db" tune --file $L --devices 0 2>&1 | tee "$OUT/devices_one.txt" || rc=1
  t1=$(date +%s.%N)
  ./$B/gemmtune --cache "$OUT/dev-all.db" tune --file $L --devices all 2>&1 | tee "$OUT/devices_all.txt" || rc=1
  t2=$(date +%s.%N)
  python3 -c "print('wall: --devices 0: %.1f s; --devices all: %.1f s' % ($t1 - $t0, $t2 - $t1))" | tee -a "$OUT/devices_all.txt"
  for i in 0 1; do
    ./$B/gemmtune --cache "$OUT/dev-shard$i.db" tune --file $L --shard $i/2 >"$OUT/shard$i.txt" 2>&1 || rc=1
  done
  ./$B/gemmtune merge "$OUT/dev-shard0.db" "$OUT/dev-shard1.db" -o "$OUT/dev-merged.db" || rc=1
  ./$B/gemmtune --cache "$OUT/dev-merged.db" list
  GEMMTUNE_CACHE="$OUT/dev-user.db" GEMMTUNE_CACHE_PATH="$OUT/dev-merged.db" GEMMTUNE_MODE=cached \
    ./$B/gemmtune run 1000x1000x1000:TN || rc=1
fi
exit $rc
