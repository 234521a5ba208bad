#!/usr/bin/env bash
# Checks that the functions in cmake/hot_symbols.txt lie together in the binary: 98% of
# them within MAX_MIB (GNU ld, which does not read the list, scatters them
# over the whole 17 MiB text), and between hq_hot_text_begin and hq_hot_text_end, the range
# cmd/startup.cpp maps as a process starts. And that the list is not stale: every static
# initializer it names (whose names change when files move between unity batches: a stale
# list cost `hq --version` 17 page faults) and 97% of its names are in the binary; else
# rerun scripts/hot_symbols.sh. Skipped (HQ_SKIPPED) when the binary was not linked by lld.
# Usage: scripts/check_hot_layout.sh HQ_BINARY HOT_SYMBOLS [MAX_MIB]
set -euo pipefail
BIN=${1:?hq binary}; LIST=${2:?hot symbols file}; MAX_MIB=${3:-4}
if ! readelf -p .comment "$BIN" 2>/dev/null | grep -q "Linker:.*LLD"; then
  echo "HQ_SKIPPED: $BIN was not linked by lld (no symbol ordering)"; exit 0
fi
# Decimal addresses (-t d): Debian's default awk (mawk) has no strtonum.
syms=$(nm --defined-only -t d "$BIN")
marker() { echo "$syms" | awk -v name="$1" '$3 == name { print $1 + 0 }'; }
BEGIN_AT=$(marker hq_hot_text_begin); END_AT=$(marker hq_hot_text_end)
[ -n "$BEGIN_AT" ] && [ -n "$END_AT" ] || { echo "hq_hot_text_begin or hq_hot_text_end is missing from $BIN"; exit 1; }
# Stale names: static initializers missing, or more than 3% of the list. The list is written
# for the default unity build; CMake turns this part off (HQ_CHECK_STALE_LIST=0) for others.
[ "${HQ_CHECK_STALE_LIST:-1}" = 0 ] || echo "$syms" | awk -v list="$LIST" '
  BEGIN { while ((getline s < list) > 0) { want[s] = 1; n++ } }
  { have[$3] = 1 }
  END {
    for (s in want) if (!(s in have)) { missing++; if (s ~ /^_GLOBAL__sub_I/) { init++; print "not in the binary: " s } }
    printf "%d of the list'"'"'s %d names are not in the binary (at most 3%%), %d of them static initializers (none)\n", missing, n, init
    exit (init == 0 && missing * 100 <= n * 3) ? 0 : 1
  }' || { echo "cmake/hot_symbols.txt is stale: run scripts/hot_symbols.sh BUILD_DIR"; exit 1; }
echo "$syms" | awk -v list="$LIST" '
  BEGIN { while ((getline s < list) > 0) hot[s] = 1 }
  ($3 in hot) && ($2 ~ /^[tTwW]$/) { print $1 + 0 }' | sort -n | awk -v max="$MAX_MIB" -v lo="$BEGIN_AT" -v hi="$END_AT" '
  { a[NR] = $1 }
  END {  # the span of all but the lowest and highest 1% (a few library functions stay apart)
    if (NR < 100) { printf "only %d of the hot functions are in the binary\n", NR; exit 1 }
    cut = int(NR / 100); span = (a[NR - cut] - a[1 + cut]) / 1048576
    printf "%d hot functions, 98%% of them within %.2f MiB (at most %d)\n", NR, span, max
    inside = a[1 + cut] >= lo + 0 && a[NR - cut] <= hi + 0
    printf "the markers span %.2f MiB and hold them: %s\n", (hi - lo) / 1048576, inside ? "yes" : "no"
    exit span <= max && inside ? 0 : 1
  }'
