#!/usr/bin/env bash
# Writes cmake/hot_symbols.txt: the functions that hq's client commands run (sbatch,
# squeue with and without filters, scontrol show job, scancel, sinfo, hq submit/queue,
# hq --version), which the link lays out together (CMakeLists.txt, lld's
# --symbol-ordering-file). Runs each command once under valgrind's callgrind against a
# throwaway `hq local` cluster; the functions used by the most commands come first.
# Usage: scripts/hot_symbols.sh [BUILD_DIR]   (needs valgrind; run after a build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
HQ=$BUILD/hq
command -v valgrind >/dev/null || { echo "hot_symbols: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
[ -x "$HQ" ] || { echo "hot_symbols: no $HQ (build first)" >&2; exit 1; }

WORK=$(mktemp -d "$BUILD/hot-symbols.XXXXXX")
export HQ_HOME=$WORK
cleanup() { "$HQ" local stop >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/bin" "$WORK/cg"
for name in sbatch squeue scontrol scancel sinfo; do ln -s "$HQ" "$WORK/bin/$name"; done
"$HQ" local start --nodes 2 --cpus 4 >/dev/null
for _ in 1 2 3; do "$WORK/bin/sbatch" -H --wrap=true >/dev/null; done

trace() {  # NAME COMMAND...
  local name=$1; shift
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg/$name" "$@" >/dev/null 2>&1 ||
    echo "hot_symbols: '$*' failed under valgrind" >&2
}
trace version "$HQ" --version
trace sbatch "$WORK/bin/sbatch" -H --wrap=true
trace sbatch_opts "$WORK/bin/sbatch" -H -J x -o /dev/null --parsable --wrap="echo hi"
trace squeue "$WORK/bin/squeue"
trace squeue_j "$WORK/bin/squeue" -j 1,2,3
trace squeue_t "$WORK/bin/squeue" -t R
trace squeue_me "$WORK/bin/squeue" --me
trace scontrol "$WORK/bin/scontrol" show job 1
trace scancel "$WORK/bin/scancel" 2
trace sinfo "$WORK/bin/sinfo"
trace hq_submit "$HQ" submit -H --wrap=true
trace hq_queue "$HQ" queue

python3 - "$WORK/cg" "$ROOT/cmake/hot_symbols.txt" <<'EOF'
import collections, glob, re, sys
used_by = collections.Counter()
for path in glob.glob(sys.argv[1] + "/*"):
    names, ran = {}, set()
    for line in open(path, errors="replace"):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, ident, name = m.groups()
        if name:
            names[ident] = name
        if kind == "fn":
            ran.add(ident)
    for ident in ran:
        name = names.get(ident, "")
        if re.match(r"^[A-Za-z_.$][\w.$@]*$", name):  # a linker symbol, not "0x..." or "(below main)"
            used_by[name] += 1
order = sorted(used_by, key=lambda n: (-used_by[n], n))
with open(sys.argv[2], "w") as out:
    out.write("\n".join(order) + "\n")
print(f"hot_symbols: {len(order)} functions into {sys.argv[2]}")
EOF
