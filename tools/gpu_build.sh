# gpu_build.sh: sourced by tools/gpu_run.sh and dev/gpu_dev.sh from the repository root.
# Makes $OUT (default ./gpu-out), adds SQLite's headers where the machine lacks them
# (.device/prep.sh, the project's device machine), records the GPU, builds gemmtune in
# build-gpu (B) and points the cache at $OUT. Returns 1 after the log's tail when the build
# fails.
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
if [ -f .device/prep.sh ] && ! pkg-config --exists sqlite3 2>/dev/null; then bash .device/prep.sh; fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"
B=build-gpu
[ -d $B ] || meson setup $B >"$OUT/setup.log" 2>&1 || { tail -30 "$OUT/setup.log"; return 1; }
meson compile -C $B >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; return 1; }
export GEMMTUNE_CACHE="$OUT/cache.db" GEMMTUNE_LOG=${GEMMTUNE_LOG:-warn}
# A GPU run must not pass by skipping: the tests fail where they find no GPU.
export GEMMTUNE_TEST_REQUIRE_GPU=1
