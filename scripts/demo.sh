#!/usr/bin/env bash
# Quick start: install deps, build, start a single-host cluster with `hq local`, run a
# small sample workload, show the queue and the outputs, then stop the cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh"
"$root/scripts/build.sh"
hq="$root/build/hq"
export HQ_HOME=${HQ_HOME:-$(mktemp -d /tmp/hq-demo.XXXXXX)}
work=$(mktemp -d /tmp/hq-demo-work.XXXXXX)
trap '"$hq" local stop >/dev/null 2>&1 || true' EXIT
echo "== starting a local cluster (controller + 4 node agents), state in $HQ_HOME"
"$hq" local start --nodes 4
"$hq" nodes
cd "$work"
cat > hello.sh <<'SCRIPT'
#!/bin/bash
#SBATCH --job-name=hello
#SBATCH --output=hello-%j.out
#SBATCH --ntasks=2
echo "job $SLURM_JOB_ID ($SLURM_JOB_NAME) on $SLURMD_NODENAME, nodes $SLURM_JOB_NODELIST, $SLURM_NTASKS tasks"
SCRIPT
echo "== submitting"
"$hq" submit hello.sh
ids=()
for i in 1 2 3 4 5 6; do ids+=("$("$hq" submit --parsable -J "sq$i" --wrap "echo \$(( $i * $i ))")"); done
long=$("$hq" submit --parsable -J sleeper --time 1 --wrap "sleep 300")
"$hq" submit --wait -J waiter --wrap "echo waited" >/dev/null
echo "== queue (the sleeper is running)"
"$hq" queue
"$hq" cancel "$long"
sleep 1
echo "== all jobs"
"$hq" queue -t all
echo "== outputs"
for f in hello-*.out slurm-*.out; do printf '%s: %s\n' "$f" "$(cat "$f")"; done
echo "== stopping"
"$hq" local stop
