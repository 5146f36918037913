#!/usr/bin/env bash
# stream_exp.sh: on a GPU machine, build and run tools/stream_exp.cu (the persistent
# streaming experiment for 65536x64x64), then Nsight Compute on the configurations named
# in $PROF (substrings of the printed names, "|"-separated). Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvcc -O3 -std=c++17 -arch=sm_90 -diag-suppress 128 tools/stream_exp.cu -lcublas -o /tmp/stream_exp || exit 1
/tmp/stream_exp | tee "$OUT/stream_exp.txt"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
ST=smsp__average_warps_issue_stalled
MET=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size
for x in long_scoreboard short_scoreboard barrier mio_throttle math_pipe_throttle wait not_selected lg_throttle dispatch_stall no_instruction selected; do
  MET=$MET,${ST}_${x}_per_issue_active.ratio
done
IFS='|' read -ra cfgs <<<"${PROF:-}"
for c in "${cfgs[@]}"; do
  echo "=== $c" | tee -a "$OUT/ncu.txt"
  STREAM_F32_ONLY=1 STREAM_ONLY="$c" $NCU --clock-control none --cache-control none --kernel-name regex:stream_gemm \
    --launch-skip 20 --launch-count 1 --metrics "$MET" /tmp/stream_exp >>"$OUT/ncu.txt" 2>&1
  grep -E "gpu__time|fma_cycles|issue_active|dram__|lts__t_sectors|warps_active|stalled_(long|short|barrier|mio|math|wait|lg|dispatch|no_inst)" "$OUT/ncu.txt" | tail -18
done
