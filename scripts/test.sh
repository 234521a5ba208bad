#!/usr/bin/env bash
# The one local gate, exactly what CI runs: install missing deps, build, run every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh"
build=${HQ_BUILD_DIR:-$root/build}
file "$build/hq" | grep -q "statically linked" || { echo "build/hq is not statically linked"; exit 1; }
cd "$build"
ctest --output-on-failure --timeout 600 -j2
