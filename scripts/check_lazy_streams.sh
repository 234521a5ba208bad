#!/usr/bin/env bash
# Checks what the static hq builds before a command runs (CLI11's validators, libstdc++'s
# standard streams: core/std_streams.hpp, CMakeLists.txt's hq_cmd_cli11):
# - `hq --version`, which prints through write(2), never runs std::ios_base::Init's
#   constructor; `hq --help`, which prints through hq::cout(), runs it exactly once;
# - `hq --version` builds CLI11's validators at most twice (once per unity batch of the
#   files that include CLI11; one more batch means a larger batch for them).
# Skipped (HQ_SKIPPED) without gdb, where gdb may not trace a program, or for a binary that
# does not defer the streams (a build without hq_static_link). A crash fails.
# Usage: scripts/check_lazy_streams.sh HQ_BINARY
set -euo pipefail
BIN=${1:?hq binary}
command -v gdb >/dev/null || { echo "HQ_SKIPPED: gdb is not installed"; exit 0; }
nm --defined-only "$BIN" | grep ' hq_start_std_streams$' >/dev/null ||  # (not -q: nm would die of SIGPIPE)
  { echo "HQ_SKIPPED: $BIN does not defer the standard streams (not linked by hq_static_link)"; exit 0; }
STREAMS=_ZNSt8ios_base4InitC1Ev CLI11=_ZN3CLI6detail13IPV4ValidatorC2Ev
# `$BIN $*` under gdb with a counting breakpoint on each (words without spaces: `run`'s
# arguments replace --args', so they are given to `run` with its redirections).
trace() {
  LC_ALL=C timeout 120 gdb -nx -batch -ex "break $STREAMS" -ex "break $CLI11" -ex 'ignore 1 1000000' \
      -ex 'ignore 2 1000000' -ex "run $* > /dev/null 2>&1" -ex 'info breakpoints' "$BIN" 2>&1 || true
}
hits() {  # breakpoint $1's count in trace's output ("breakpoint already hit N time(s)"), 0 if none
  awk -v n="$1" '$1 == n && /breakpoint/ { bp = 1; next } bp && /already hit/ { print $4; found = 1 } { bp = 0 }
                 END { if (!found) print 0 }'
}
check_ran() {  # $1: what; $2: trace's output
  if grep -qE 'ptrace: Operation not permitted|Could not trace the inferior|During startup program exited' <<<"$2"; then
    echo "HQ_SKIPPED: gdb may not run $BIN here: $(grep -m1 -E 'ptrace|trace the inferior|During startup' <<<"$2")"
    exit 0
  fi
  if ! grep -qE '^\[Inferior 1 \(process [0-9]+\) exited normally\]' <<<"$2" ||
     [ "$(grep -cE '^[12] +breakpoint +keep +y' <<<"$2")" -ne 2 ]; then
    echo "$1 did not run to a normal exit with both breakpoints set:"; echo "$2"; exit 1
  fi
}
version_trace=$(trace --version); help_trace=$(trace --help)
check_ran "hq --version" "$version_trace"; check_ran "hq --help" "$help_trace"
version=$(hits 1 <<<"$version_trace"); help=$(hits 1 <<<"$help_trace"); validators=$(hits 2 <<<"$version_trace")
echo "std::ios_base::Init constructed: $version time(s) for hq --version (want 0), $help for hq --help (want 1)"
echo "CLI11's IPV4Validator constructed by hq --version: $validators time(s) (want 1 or 2)"
[ "$version" -eq 0 ] && [ "$help" -eq 1 ] && [ "$validators" -ge 1 ] && [ "$validators" -le 2 ]
