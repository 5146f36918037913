#!/usr/bin/env bash
# test.sh: the README's test command. Installs what is missing, builds, runs every test
# (GPU tests say "skipped: no CUDA device" without one) and ends with one line
# "N passed, N failed, N skipped" counting the test cases.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh || exit 1
B=${BUILD_DIR:-build}
meson test -C $B --print-errorlogs --num-processes 2
rc=$?
python3 tools/count_tests.py $B/meson-logs/testlog.json || rc=1
exit $rc
