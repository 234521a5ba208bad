#!/usr/bin/env bash
# Instructions (valgrind's callgrind, user space only) that hq's daemons execute for one
# submission and for one job, on a throwaway `hq local`: figures that do not move with the
# VM's hour the way times do, for changes too small for a rate to show (a few percent).
#   controller: the controller is restarted under callgrind, 20 `sbatch -H` warm it up, then
#               N sequential `sbatch -H` (compare.sh's A1 line) are counted, per thread
#               (1: the event loop, 2: the journal's writer, 3: the accounting store's).
#   agent:      node local1's agent is restarted under callgrind, 10 jobs warm it up, then
#               N held jobs on it (-w local1) are released and counted to their ends (the
#               agent alone: its shims and the scripts are not counted).
#   nodes:      a controller alone whose one partition has NODES declared nodes (no agent:
#               the jobs are held), N `sbatch -H` counted: how a submission grows with
#               the partition (the check that the job could ever run walks its nodes).
# Needs valgrind. Times under it are meaningless; instruction counts are the figure.
# usage: bench/instructions.sh HQ_BINARY controller|agent [N]   (N: 300 / 100)
#        bench/instructions.sh HQ_BINARY nodes NODES [N]         (N: 100)
set -u
H=$(realpath "${1:?hq binary}"); WHAT=${2:?controller or agent}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
export HOME=$(mktemp -d /tmp/hq-instructions.XXXX); export XDG_RUNTIME_DIR=$HOME/run
mkdir -p "$HOME/links" "$XDG_RUNTIME_DIR"
trap '"$H" local stop >/dev/null 2>&1; [ -n "${vg:-}" ] && kill -9 "$vg" 2>/dev/null; rm -rf "$HOME"' EXIT
"$H" install-links "$HOME/links" >/dev/null; export PATH=$HOME/links:$PATH
queue_empty() { for _ in $(seq 600); do [ "$(squeue -h | wc -l)" = 0 ] && return 0; sleep 0.2; done; return 1; }

# Restarts process $1 of `hq local` under callgrind, counting from the start.
under_callgrind() {
  local pid=$1 args
  args=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  # shellcheck disable=SC2086  # the daemon's own arguments, split as they were
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$HOME/cg.out" $args >/dev/null 2>"$HOME/vg.err" &
  vg=$!
  disown "$vg"  # ended by the trap; no job-control notice
}

report() {  # N WHAT: instructions per WHAT, per thread of the dump
  local f total
  for f in "$HOME"/cg.out.1*; do
    total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1; exit}')
    echo "$(basename "$f" | sed 's/cg.out.1-0*/thread /;s/cg.out.1$/the process/'): $((total / $1)) instructions a $2"
  done
}

case "$WHAT" in
  controller)
    N=${3:-300}
    "$H" local start --nodes 8 --cpus 16 >/dev/null || exit 1
    under_callgrind "$(head -1 "$HOME/.local/state/hq/local/pids")"
    for _ in $(seq 300); do squeue -h >/dev/null 2>&1 && break; sleep 0.2; done
    for ((i = 0; i < 20; i++)); do sbatch -Q -o /dev/null -H -J a1 --wrap=true >/dev/null; done
    callgrind_control -z "$vg" >/dev/null 2>&1
    for ((i = 0; i < N; i++)); do sbatch -Q -o /dev/null -H -J a1 --wrap=true >/dev/null; done
    callgrind_control -d "$vg" >/dev/null 2>&1
    report "$N" submission ;;
  agent)
    N=${3:-100}
    "$H" local start --nodes 2 --cpus 16 >/dev/null || exit 1
    under_callgrind "$(sed -n 2p "$HOME/.local/state/hq/local/pids")"
    for _ in $(seq 300); do sinfo -h -n local1 -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
    for ((i = 0; i < 10; i++)); do sbatch -Q -o /dev/null -w local1 --wrap=true >/dev/null; done
    queue_empty || { echo "the warm-up jobs did not end"; exit 1; }
    callgrind_control -z "$vg" >/dev/null 2>&1
    for ((i = 0; i < N; i++)); do sbatch -Q -o /dev/null -H -w local1 --wrap=true >/dev/null; done
    squeue -h -o %i | xargs scontrol release
    queue_empty || { echo "the jobs did not end"; exit 1; }
    callgrind_control -d "$vg" >/dev/null 2>&1
    report "$N" job ;;
  nodes)
    NODES=${3:?NODES}; N=${4:-100}
    "$H" keygen "$HOME/keys" scale >/dev/null || exit 1
    printf '[cluster]\nname = "scale"\nkeys_dir = "%s"\nallow_root_jobs = true\n[controller]\nhost = "127.0.0.1"\nport = 0\nstate_dir = "%s"\n[[node]]\nnames = "rack[1-%d]"\ncpus = 16\nmemory = "64G"\n[[partition]]\nname = "p"\nnodes = "rack[1-%d]"\ndefault = true\n' \
      "$HOME/keys" "$HOME/state" "$NODES" "$NODES" >"$HOME/config.toml"
    export HQ_CONFIG=$HOME/config.toml
    valgrind --tool=callgrind --callgrind-out-file="$HOME/cg.out" "$H" controller --config "$HOME/config.toml" >/dev/null 2>"$HOME/vg.err" &
    vg=$!
    disown "$vg"
    for _ in $(seq 300); do squeue -h >/dev/null 2>&1 && break; sleep 0.2; done
    for ((i = 0; i < 20; i++)); do sbatch -Q -o /dev/null -H --wrap=true >/dev/null || exit 1; done
    callgrind_control -z "$vg" >/dev/null 2>&1
    for ((i = 0; i < N; i++)); do sbatch -Q -o /dev/null -H --wrap=true >/dev/null; done
    callgrind_control -d "$vg" >/dev/null 2>&1
    report "$N" submission ;;
  *) echo "usage: bench/instructions.sh HQ_BINARY controller|agent [N] | nodes NODES [N]"; exit 2 ;;
esac
