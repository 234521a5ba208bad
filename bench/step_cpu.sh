#!/usr/bin/env bash
# Where a job step's time goes: a one-node `hq local` cluster per cgroup mode, a batch job
# that runs N sequential `srun true`, and per step the wall time, the agent's and the
# controller's CPU (/proc/PID/stat) and the whole host's busy CPU (/proc/stat).
# usage: bench/step_cpu.sh [HQ_BINARY]   (env: N=2000 steps, MODES="auto none" for HQ_CGROUP)
# Starts and stops its own cluster under a temporary HQ_HOME; leaves nothing running.
set -euo pipefail
hq=$(realpath "${1:-$(dirname "$0")/../build/hq}")
n=${N:-2000}
tck=$(getconf CLK_TCK)
for mode in ${MODES:-auto none}; do
  home=$(mktemp -d /tmp/hq-stepcpu.XXXXXX)
  export HQ_HOME=$home PATH=$home/bin:$PATH
  mkdir -p "$home/bin" "$home/work"
  "$hq" install-links "$home/bin" >/dev/null
  HQ_CGROUP=$mode "$hq" local start --nodes 1 >"$home/start.log" 2>&1 || { cat "$home/start.log"; exit 1; }
  trap '"$hq" local stop >/dev/null 2>&1 || true' EXIT
  ctl=$(awk '$1 == "controller" {print $2; exit}' "$home/local/daemons")
  agent=$(awk '$1 == "local1" {print $2; exit}' "$home/local/daemons")
  sample="echo \$(awk '{print \$14+\$15}' /proc/$agent/stat) \$(awk '{print \$14+\$15}' /proc/$ctl/stat) \$(awk '/^cpu /{print \$2+\$3+\$4+\$7+\$8}' /proc/stat) \$EPOCHREALTIME"
  printf '#!/bin/bash\nsrun true\n%s > before.txt\nfor ((i=0;i<%d;i++)); do srun true; done\n%s > after.txt\n' \
    "$sample" "$n" "$sample" > "$home/work/job.sh"
  (cd "$home/work" && sbatch --wait -o job.out job.sh >/dev/null) || { cat "$home/work/job.out"; exit 1; }
  paste "$home/work/before.txt" "$home/work/after.txt" | awk -v t="$tck" -v n="$n" -v m="$mode" '{
    printf "cgroup=%s steps=%d per_step: wall %.3f ms, agent cpu %.3f ms, controller cpu %.3f ms, host busy cpu %.3f ms; %d steps/s\n",
      m, n, ($8-$4)*1000/n, ($5-$1)*1000/t/n, ($6-$2)*1000/t/n, ($7-$3)*1000/t/n, n/($8-$4)}'
  "$hq" local stop >/dev/null 2>&1
  trap - EXIT
  rm -rf "$home"
done
