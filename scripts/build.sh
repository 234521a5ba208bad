#!/usr/bin/env bash
# Configures (once) and builds hq with Ninja into build/ (or $HQ_BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HQ_BUILD_DIR:-$root/build}
export CCACHE_DIR=${CCACHE_DIR:-$root/.cache/ccache}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${HQ_BUILD_TYPE:-Release} "$@"
fi
ninja -C "$build" ${HQ_TARGETS:-}
