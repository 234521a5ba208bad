#!/usr/bin/env bash
# Checks that the static hq builds libstdc++'s standard streams only for a command that
# uses them (core/std_streams.hpp): `hq --version`, which prints through stdio, must never
# run std::ios_base::Init's constructor; `hq --help`, which prints through hq::cout(), runs
# it exactly once. Skipped (HQ_SKIPPED) without gdb, or for a binary that does not defer
# the streams (a build without hq_static_link).
# Usage: scripts/check_lazy_streams.sh HQ_BINARY
set -euo pipefail
BIN=${1:?hq binary}
command -v gdb >/dev/null || { echo "HQ_SKIPPED: gdb is not installed"; exit 0; }
nm --defined-only "$BIN" | grep ' hq_start_std_streams$' >/dev/null ||  # (not -q: nm would die of SIGPIPE)
  { echo "HQ_SKIPPED: $BIN does not defer the standard streams (not linked by hq_static_link)"; exit 0; }
constructions() {  # how many times `$BIN $*` ran the constructor (words without spaces; `run`'s
  # arguments replace --args', so they are given to `run` with its redirections)
  gdb -nx -batch -ex 'break _ZNSt8ios_base4InitC1Ev' -ex 'ignore 1 1000000' -ex "run $* > /dev/null 2>&1" \
      -ex 'info breakpoints' "$BIN" 2>&1 |
    awk '/breakpoint already hit/ { n = $4 } END { print n + 0 }'
}
fail=0
version=$(constructions --version); help=$(constructions --help)
echo "std::ios_base::Init constructed: $version time(s) for hq --version (want 0), $help for hq --help (want 1)"
[ "$version" -eq 0 ] || fail=1
[ "$help" -eq 1 ] || fail=1
exit $fail
