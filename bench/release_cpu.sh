#!/usr/bin/env bash
# compare.sh's B2 on a throwaway `hq local` (8 nodes x 16 CPUs): N held trivial jobs
# submitted by 8 loops of `sbatch -H`, released at once, timed until the queue is empty;
# prints jobs/s and the CPU a job cost the whole host (/proc/stat), the controller, the
# agents, and the agents' children (the shims and scripts, from the agents' cutime/cstime).
# Compare two binaries in the order A B B A (docs/performance.md, "How to measure").
# usage: bench/release_cpu.sh HQ_BINARY [N]   (default N=1000)
set -u
H=$(realpath "${1:?hq binary}"); N=${2:-1000}
export HOME=$(mktemp -d /tmp/hq-release-cpu.XXXX); export XDG_RUNTIME_DIR=$HOME/run
mkdir -p "$HOME/links" "$XDG_RUNTIME_DIR"
trap '"$H" local stop >/dev/null 2>&1; rm -rf "$HOME"' EXIT
"$H" install-links "$HOME/links" >/dev/null; export PATH=$HOME/links:$PATH
"$H" local start --nodes 8 --cpus 16 >/dev/null || exit 1
pids=$(cat "$HOME/.local/state/hq/local/pids"); ctld=$(echo "$pids" | head -1); agents=$(echo "$pids" | tail -n +2)
per=$(( (N + 7) / 8 ))
for w in $(seq 8); do ( for ((i = 0; i < per; i++)); do sbatch -Q -o /dev/null -H -J rel --wrap=true >/dev/null; done ) & done; wait
ids=$(squeue -h | awk '{print $1}'); n=$(echo "$ids" | wc -l)
cpu() { for p in "$@"; do awk '{print $14+$15, $16+$17}' "/proc/$p/stat"; done | awk '{a+=$1; b+=$2} END{print a, b}'; }
host() { awk '/^cpu /{print $2+$3+$4+$6+$7+$8}' /proc/stat; }
read -r c0 _ <<<"$(cpu $ctld)"; read -r a0 k0 <<<"$(cpu $agents)"; s0=$(host)
t0=$EPOCHREALTIME
echo "$ids" | xargs -n 500 scontrol release >/dev/null 2>&1
deadline=$((EPOCHSECONDS + 600))
while [ "$(squeue -h | wc -l)" != 0 ]; do [ $EPOCHSECONDS -ge $deadline ] && { echo "jobs still queued after 600 s" >&2; exit 1; }; sleep 0.1; done
t1=$EPOCHREALTIME
read -r c1 _ <<<"$(cpu $ctld)"; read -r a1 k1 <<<"$(cpu $agents)"; s1=$(host)
tick=$(getconf CLK_TCK)
awk -v n="$n" -v a="$t0" -v b="$t1" -v c=$((c1 - c0)) -v ag=$((a1 - a0)) -v k=$((k1 - k0)) -v s=$((s1 - s0)) -v t="$tick" \
  'BEGIN{m=1000/t/n; printf "%d jobs %.0f/s  CPU ms/job: all %.2f ctld %.2f agents %.2f children %.2f\n", n, n/(b-a), s*m, c*m, ag*m, k*m}'
