#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/ and runs each for
# SECONDS (default 60) on a scratch copy of its seed corpus in tests/fuzz/corpus/.
# Crash inputs are kept in build-fuzz/crashes/. Exit status: non-zero if any target failed.
#   scripts/fuzz.sh 3          # the quick run the test suite does
#   scripts/fuzz.sh 3600       # an hour each
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HQ_FUZZ_BUILD_DIR:-$root/build-fuzz}
export CCACHE_DIR=${CCACHE_DIR:-$root/.cache/ccache}
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DHQ_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" fuzz_all >/dev/null
mkdir -p "$build/crashes"
status=0
for seeds in "$root"/tests/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  work=$(mktemp -d "$build/corpus-XXXXXX")  # scratch in the fuzz build, not /tmp
  cp -r "$seeds". "$work/"
  log="$build/$target.log"
  if "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$build/crashes/$target-" "$work" >"$log" 2>&1; then
    summary=$(grep -a -E '^#[0-9]+.*DONE|Done [0-9]+ runs' "$log" | tail -1)
    echo "fuzz $target: ok ($seconds s) ${summary}"
  else
    echo "fuzz $target: FAILED, see $log and $build/crashes/"
    tail -30 "$log"
    status=1
  fi
  rm -rf "$work"
done
exit $status
