#!/usr/bin/env bash
# first_call_ab.sh: GPU. A process's first call in mode cached, one tree against another:
# dev/first_call_gpu.c built on this tree and on a base tree (FCA_BASE_TAR: a
# `git archive COMMIT -o FILE` tarball, made where git is, carried to the GPU machine),
# run alternately FCA_ROUNDS times (default 3), FCG_CHILDREN (default 8) children each,
# on one cache file, at log level info (each first call's steps). Prints per tree the
# median, min, max of a process's first call (the children that make the calls at once)
# and of the first calls after it. Logs to $OUT (default ./gpu-out)/fca.txt.
# Usage: git archive 971b6da -o .device/base.tar; FCA_BASE_TAR=.device/base.tar bash dev/first_call_ab.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. tools/gpu_build.sh || exit 1
tree=/tmp/fca-base
rm -rf $tree && mkdir -p $tree && tar -xf "${FCA_BASE_TAR:?a base tarball}" -C $tree && cp dev/first_call_gpu.c $tree/dev/
(cd $tree && meson setup build-gpu >"$OUT/fca-setup.log" 2>&1 && meson compile -C build-gpu >"$OUT/fca-build.log" 2>&1) ||
  { echo "the base tree does not build"; tail -20 "$OUT/fca-build.log"; exit 1; }
for t in new base; do
  d=.; [ $t = base ] && d=$tree
  (cd $d && cc -std=c11 -O2 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime -Isrc -Ibuild-gpu \
    -I/usr/local/cuda/include dev/first_call_gpu.c build-gpu/libgemmtune.a -L/usr/local/cuda/lib64 \
    -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/fca-$t) || { echo "first_call_gpu ($t) does not build"; exit 1; }
done
log=$OUT/fca.txt
rm -f "$log" "$OUT"/fca.db*
for round in $(seq "${FCA_ROUNDS:-3}"); do
  for t in base new; do
    echo "=== $t round $round" >>"$log"
    GEMMTUNE_CACHE=$OUT/fca.db GEMMTUNE_LOG=info FCG_CHILDREN=${FCG_CHILDREN:-8} /tmp/fca-$t >>"$log" 2>&1
  done
done
rm -f "$OUT"/fca.db*
python3 - "$log" <<'PY'
import re, statistics, sys
tree = kind = None; first = {}; later = {}; is_first = False
for l in open(sys.argv[1]):
    m = re.match(r"=== (\w+) round", l)
    if m: tree = m.group(1); continue
    m = re.match(r"child \d+, (\w+):", l)
    if m: kind = m.group(1); is_first = True; continue
    m = re.search(r"call ([0-9.]+) ms on the host", l)
    if not m: continue
    v = float(m.group(1))
    if is_first and kind != "steps": first.setdefault(tree, []).append(v)
    elif not is_first: later.setdefault(tree, []).append(v)
    is_first = False
for t in sorted(first):
    f, g = sorted(first[t]), sorted(later[t])
    print("%s: a process's first call, ms: median %.2f, min %.2f, max %.2f, %d of %d over 5; the first calls after it: median %.2f, max %.2f"
          % (t, statistics.median(f), f[0], f[-1], sum(x > 5 for x in f), len(f), statistics.median(g), g[-1]))
PY
