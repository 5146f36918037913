#!/usr/bin/env bash
# deps.sh: installs what building gemmtune needs and is missing (Debian/Ubuntu):
# meson, ninja, pkg-config, SQLite's headers, python3. The CUDA toolkit (NVRTC and
# headers) is expected at $CUDA_PATH or /usr/local/cuda and is not installed here.
set -euo pipefail
need=()
command -v meson >/dev/null 2>&1 || need+=(meson)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v cc >/dev/null 2>&1 || need+=(gcc)
pkg-config --exists sqlite3 2>/dev/null || need+=(libsqlite3-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
cuda=${CUDA_PATH:-/usr/local/cuda}
if [ ! -f "$cuda/include/nvrtc.h" ]; then
  echo "gemmtune needs the CUDA toolkit (NVRTC): none at $cuda; set CUDA_PATH" >&2
  exit 1
fi
