#!/usr/bin/env bash
# build.sh: installs what is missing (tools/deps.sh) and builds gemmtune in $BUILD_DIR
# (default build). Used by demo.sh and test.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh || exit 1
B=${BUILD_DIR:-build}
[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null || exit 1
meson compile -C "$B" >"$B/compile.log" 2>&1 || { tail -40 "$B/compile.log"; exit 1; }
