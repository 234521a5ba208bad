#!/usr/bin/env bash
# Writes cmake/hot_symbols.txt: the functions that hq's client commands run (sbatch,
# squeue with and without filters, scontrol show job, scancel, sinfo, hq submit/queue,
# hq --version, srun inside a batch job and from outside one), which the link lays out together (CMakeLists.txt, lld's
# --symbol-ordering-file). Runs each command once under valgrind's callgrind against a
# throwaway `hq local` cluster; the functions used by the most commands come first, then
# what a job's shim runs after the agent's fork (named here: valgrind does not follow it).
# Usage: scripts/hot_symbols.sh [BUILD_DIR]   (needs valgrind; run after a build)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
HQ=$BUILD/hq
command -v valgrind >/dev/null || { echo "hot_symbols: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
[ -x "$HQ" ] || { echo "hot_symbols: no $HQ (build first)" >&2; exit 1; }

WORK=$(mktemp -d "$BUILD/hot-symbols.XXXXXX")
# The throwaway cluster only: nothing that points clients at another controller.
unset HQ_CONTROLLER HQ_CLIENT_SOCKET HQ_CONFIG HQ_CA_FILE HQ_AUTH_SOCKET HQ_SECRET_FILE HQ_RUN_DIR \
      HQ_WAIT_FOR_CONTROLLER SLURM_JOB_ID
export HQ_HOME=$WORK
cleanup() { "$HQ" local stop >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/bin" "$WORK/cg"
for name in sbatch squeue scontrol scancel sinfo srun; do ln -s "$HQ" "$WORK/bin/$name"; done
"$HQ" local start --nodes 2 --cpus 4 >/dev/null
"$HQ" local status >/dev/null || { echo "hot_symbols: the throwaway cluster did not start" >&2; exit 1; }
for _ in 1 2 3; do "$WORK/bin/sbatch" -H --wrap=true >/dev/null; done

failed=0
trace() {  # NAME COMMAND...
  local name=$1; shift
  if ! timeout 120 valgrind --tool=callgrind --demangle=no --callgrind-out-file="$WORK/cg/$name" "$@" >/dev/null 2>&1; then
    echo "hot_symbols: '$*' failed under valgrind" >&2
    failed=$((failed + 1))
  fi
}
trace version "$HQ" --version
trace sbatch "$WORK/bin/sbatch" -H --wrap=true
trace sbatch_opts "$WORK/bin/sbatch" -H -J x -o /dev/null --parsable --wrap="echo hi"
trace sbatch_quiet "$WORK/bin/sbatch" -Q -o /dev/null -H -J a1 --wrap=true  # compare.sh's A1
trace squeue "$WORK/bin/squeue"
trace squeue_j "$WORK/bin/squeue" -j 1,2,3
trace squeue_t "$WORK/bin/squeue" -t R
trace squeue_me "$WORK/bin/squeue" --me
trace scontrol "$WORK/bin/scontrol" show job 1
trace scancel "$WORK/bin/scancel" 2
trace sinfo "$WORK/bin/sinfo"
trace hq_submit "$HQ" submit -H --wrap=true
trace hq_queue "$HQ" queue
trace srun_alloc "$WORK/bin/srun" -N1 true
# srun as a job script runs it (a step in the job's allocation): valgrind inside the job.
"$WORK/bin/sbatch" -W -o "$WORK/srun_step.out" --wrap="timeout 120 valgrind --tool=callgrind --demangle=no \
  --callgrind-out-file=$WORK/cg/srun_step $WORK/bin/srun true" >/dev/null 2>&1 || true
[ -s "$WORK/cg/srun_step" ] || { echo "hot_symbols: srun in a batch job failed under valgrind" >&2; failed=$((failed + 1)); }

[ "$failed" -eq 0 ] || { echo "hot_symbols: $failed command(s) failed; the list is left as it was" >&2; exit 1; }
nm --defined-only "$HQ" > "$WORK/nm.txt"
python3 - "$WORK/cg" "$WORK/hot_symbols.txt" "$WORK/nm.txt" <<'EOF'
import collections, glob, re, sys
used_by = collections.Counter()
traces_of = collections.defaultdict(set)
for path in glob.glob(sys.argv[1] + "/*"):
    trace = path.rsplit("/", 1)[-1]
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
            traces_of[name].add(trace)
# The functions used by the most commands first; among those used by as many, the ones
# used by the same commands together (sbatch's first: the loop users time most), so that
# each command's code lies in as few stretches of the binary as it can.
priority = ["sbatch_quiet", "sbatch", "sbatch_opts", "hq_submit", "squeue", "squeue_j", "squeue_t", "squeue_me", "hq_queue",
            "scontrol", "scancel", "sinfo", "srun_step", "srun_alloc", "version"]
def signature(name):
    return [0 if t in traces_of[name] else 1 for t in priority]
order = sorted(used_by, key=lambda n: (-used_by[n], signature(n), n))
# Then what a job's shim and its script's child run between the agent's fork and the
# script's exec (cmd/agent/launcher.cpp): forked children map the binary's text afresh.
launch_parts = ("run_shim", "run_script", "wait_fenced", "lease_age", "child_fail", "agent_says_go",
                "keep_only", "join_cgroup_file", "launch_batch", "kShimIgnores")
launch_libc = {"_Fork", "__close_range", "__bsd_signal", "syscall", "rename", "_exit", "__setsid", "setsid",
               "__pipe2", "pipe2", "__setpgid", "setpgid", "__sched_setaffinity_new", "__chdir", "chdir",
               "__dup2", "dup2", "__sigprocmask", "__pthread_sigmask", "__execve", "execve", "__wait4",
               "__waitpid", "__nanosleep", "__clock_nanosleep", "__stat", "__fstatat64", "unlink", "__unlink",
               "kill", "__kill", "__strerror_r", "strerror", "__libc_open64", "__open_nocancel", "__libc_write",
               "__libc_read", "__libc_close", "__pthread_enable_asynccancel", "__pthread_disable_asynccancel",
               "__snprintf", "__vsnprintf_internal", "_IO_str_init_static_internal", "_IO_no_init"}
# glibc's string functions come in variants for each CPU, one chosen at start (IRELATIVE);
# valgrind's CPU has no AVX-512, so the traces name other variants than a native run uses.
# Every variant of a string function the commands use goes with them (a few dozen small ones).
variant = re.compile(r"^__((?:mem|str|stp|rawmem|wmem|wcs)[a-z]*)_(?:sse2|ssse3|sse4_[12]|avx|avx2|avx512|evex)\w*$")
variants = collections.defaultdict(list)  # family (memmove, strlen, ...) -> its variants
for line in open(sys.argv[3]):
    parts = line.split()
    if len(parts) == 3 and (m := variant.match(parts[2])):
        variants[m.group(1)].append(parts[2])
used = {name for name in order} | {m.group(1) for name in order if (m := variant.match(name))}
seen = set(order)
for family in sorted(f for f in variants if f in used):
    for name in sorted(set(variants[family]) - seen):
        order.append(name)
        seen.add(name)
for line in open(sys.argv[3]):
    parts = line.split()
    if len(parts) != 3 or parts[2] in seen:
        continue
    name = parts[2]
    if name in launch_libc or any(p in name for p in launch_parts):
        order.append(name)
        seen.add(name)
# cmd/startup.cpp maps the code from the first name to the last in one call.
order = ["hq_hot_text_begin"] + [n for n in order if n not in ("hq_hot_text_begin", "hq_hot_text_end")] + ["hq_hot_text_end"]
with open(sys.argv[2], "w") as out:
    out.write("\n".join(order) + "\n")
if len(order) < 500:
    sys.exit(f"hot_symbols: only {len(order)} functions were seen; the list is left as it was")
print(f"hot_symbols: {len(order)} functions")
EOF
mv "$WORK/hot_symbols.txt" "$ROOT/cmake/hot_symbols.txt"
echo "hot_symbols: written to $ROOT/cmake/hot_symbols.txt"
