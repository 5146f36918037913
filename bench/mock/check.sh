#!/usr/bin/env bash
# check.sh: builds bench/bench.c against bench/mock/mock.c (no GPU needed; CUDA headers
# from ${CUDA_PATH:-/usr/local/cuda}/include) with AddressSanitizer and UBSan, and checks
# the bench's control flow: every dtype and op pair, times that exclude the L2 flush, the
# cuBLASLt search's choice (algorithm 3 of 3 timed) and its skips, the failure paths, the
# JSON, and that nothing is left allocated. Usage: bash bench/mock/check.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cuda=${CUDA_PATH:-/usr/local/cuda}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra \
  -I"$root/include" -I"$cuda/include" "$root/bench/bench.c" "$here/mock.c" -o "$tmp/bench" -lm
fail=0
check() { # check NAME FILE PATTERN: FILE must hold a line matching PATTERN
  if grep -Eq -- "$3" "$2"; then echo "ok   $1"; else echo "not ok $1: no line matching '$3'"; fail=1; fi
}
shapes="17x33x65:TN 64x48x40:NT 9x7x5:TT 30x20x10"
for dt in f32 f64 tf32 f16 f16_f32 bf16 bf16_f32 f32_3xtf32; do
  "$tmp/bench" --dtype "$dt" --json "$tmp/$dt.json" $shapes >"$tmp/$dt.out" 2>&1 || { echo "not ok $dt: exit $?"; fail=1; }
  check "$dt: times, ratios, pick" "$tmp/$dt.out" "^ +9 +7 +5 TT +10\.00 +12\.00 +9\.00 +3/3 +1\.200 +0\.900 "
  check "$dt: all shapes" "$tmp/$dt.out" "^geomean gt/cublaslt = 0\.900 over 4 shapes"
  check "$dt: wrong algorithm refused" "$tmp/$dt.out" "cuBLASLt algorithm 2: rel err [0-9.]+e-01 against cuBLAS exceeds"
  check "$dt: nothing left" "$tmp/$dt.out" "live device buffers 0, events 0, lt objects 0"
  python3 -m json.tool "$tmp/$dt.json" >/dev/null && echo "ok   $dt: JSON parses" || { echo "not ok $dt: JSON"; fail=1; }
done
# a gemmtune failure on the first (cold) call: that shape fails, the next runs, exit 1
MOCK_FAIL_GT=0 "$tmp/bench" $shapes >"$tmp/fail.out" 2>&1 && { echo "not ok gt failure: exit 0"; fail=1; }
check "gt failure: the shape fails" "$tmp/fail.out" "^ +17 +33 +65 TN .* error .*FAIL$"
check "gt failure: the others run" "$tmp/fail.out" "^geomean gt/cublas = 1\.200 over 3 shapes"
check "gt failure: nothing left" "$tmp/fail.out" "live device buffers 0, events 0, lt objects 0"
# mode cached's exact-shape twins: counted per shape; a twin with other bits fails its shape
MOCK_SPECIALIZE=1 "$tmp/bench" --json "$tmp/spec.json" $shapes >"$tmp/spec.out" 2>&1 || { echo "not ok specialized: exit $?"; fail=1; }
check "specialized: all shapes" "$tmp/spec.out" "^geomean gt/cublas = 1\.200 over 4 shapes"
[ "$(grep -c '"specialized": true' "$tmp/spec.json")" = 4 ] && echo "ok   specialized: in the JSON" || { echo "not ok specialized: JSON"; fail=1; }
MOCK_SPECIALIZE=2 "$tmp/bench" $shapes >"$tmp/spec2.out" 2>&1 && { echo "not ok other bits: exit 0"; fail=1; }
check "other bits: refused" "$tmp/spec2.out" "17x33x65:TN: the exact-shape kernel's result differs from the generic one's"
check "other bits: the others run" "$tmp/spec2.out" "^geomean gt/cublas = 1\.200 over 3 shapes"
check "other bits: nothing left" "$tmp/spec2.out" "live device buffers 0, events 0, lt objects 0"
# a gemmtune failure while timing
MOCK_FAIL_GT=50 "$tmp/bench" $shapes >"$tmp/fail2.out" 2>&1 && { echo "not ok gt timing failure: exit 0"; fail=1; }
check "gt timing failure: reported" "$tmp/fail2.out" "timing gemmtune failed"
check "gt timing failure: nothing left" "$tmp/fail2.out" "live device buffers 0, events 0, lt objects 0"
# no algorithm from the heuristic; only a slow one usable; no cuBLASLt at all
LT_N=0 "$tmp/bench" 17x33x65:TN >"$tmp/lt0.out" 2>&1
check "no algorithm: said" "$tmp/lt0.out" "returned no algorithm"
check "no algorithm: gt still timed" "$tmp/lt0.out" "^ +17 +33 +65 TN +10\.00 +12\.00 +- +- +1\.200 +- "
LT_N=3 "$tmp/bench" 17x33x65:TN >"$tmp/lt3.out" 2>&1
check "slow algorithm only: picked" "$tmp/lt3.out" "^ +17 +33 +65 TN +10\.00 +12\.00 +20\.00 +0/2 "
"$tmp/bench" --no-lt 17x33x65:TN >"$tmp/nolt.out" 2>&1
check "--no-lt: no search" "$tmp/nolt.out" "^ +17 +33 +65 TN +10\.00 +12\.00 +- +- "
# the written flush: the same times (the flush stays outside them), memsets counted
"$tmp/bench" --flush write 17x33x65:TN >"$tmp/fw.out" 2>&1
check "--flush write: times" "$tmp/fw.out" "^ +17 +33 +65 TN +10\.00 +12\.00 "
check "--flush write: said" "$tmp/fw.out" "MiB written before each"
check "--flush read: said" "$tmp/f32.out" "MiB read before each"
rc=0; "$tmp/bench" --reps 0 5x5x5 >/dev/null 2>&1 || rc=$?
if [ $rc -eq 2 ]; then echo "ok   bad usage exits 2"; else echo "not ok bad usage: exit $rc"; fail=1; fi
[ $fail -eq 0 ] && echo "all checks passed" || echo "SOME CHECKS FAILED"
exit $fail
