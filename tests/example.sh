#!/usr/bin/env bash
# example.sh BUILD SRC CUDA: installs the build into a scratch root, builds
# examples/gemm.c with pkg-config against it as a user would, and runs it: TAP. Without a
# GPU the run must end with CUDA's or the library's message, not a crash.
set -uo pipefail
build=$1 src=$2 cuda=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! meson install -C "$build" --no-rebuild --destdir "$tmp/root" >"$tmp/install.log" 2>&1; then
  echo "not ok 1 - meson install"; sed 's/^/# /' "$tmp/install.log" | tail -20; echo "1..1"; exit 1
fi
pc=$(find "$tmp/root" -name gemmtune.pc | head -1)
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$tmp/root"
if cc -std=c11 -o "$tmp/gemm" "$src/examples/gemm.c" $(pkg-config --cflags --libs gemmtune) \
     -I"$cuda/include" -L"$cuda/lib64" -lcudart -lm >"$tmp/cc.log" 2>&1; then
  echo "ok 1 - examples/gemm.c builds with pkg-config --cflags --libs gemmtune"
else
  echo "not ok 1 - examples/gemm.c does not build"; sed 's/^/# /' "$tmp/cc.log"; echo "1..2"; exit 1
fi
libdir=$(dirname "$(find "$tmp/root" -name 'libgemmtune.so' | head -1)")
out=$(LD_LIBRARY_PATH="$libdir:$cuda/lib64" "$tmp/gemm" 2>&1); rc=$?
echo "# $out"
if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && echo "$out" | grep -q "CUDA"; }; then
  echo "ok 2 - the example runs (exit $rc)"
else
  echo "not ok 2 - the example ended with $rc"
fi
echo "1..2"
