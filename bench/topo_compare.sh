#!/bin/sh
# Issue 19's comparison: one seeded AI-cluster workload (bench/ai_workload.py) replayed by
# `hq sim` on 8 NVL72-style racks of 18 nodes (bench/sim-nvl-blocks.toml) three ways:
# topology off (jobs spread over any nodes), Slurm's topology/block (best fit, no oracle)
# and hq's (best fit and the fragmentation oracle, bf_topopt_delay). Prints a Markdown table.
#   bench/topo_compare.sh [SEED] [JOBS] [LOAD] [DELAY]     (defaults: 1 4000 0.6 1h)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
hq=${HQ:-$here/../build/hq}
seed=${1:-1} jobs=${2:-4000} load=${3:-0.6} delay=${4:-1h}
trace=$(mktemp /tmp/hq-ai-XXXXXX.swf)
trap 'rm -f "$trace"' EXIT
python3 "$here/ai_workload.py" --seed "$seed" --jobs "$jobs" --load "$load" > "$trace"
echo "workload: seed $seed, $jobs jobs, offered load $load; large = 8 nodes or more; delay $delay"
echo
echo "| policy | large jobs' mean wait | large started within 1 h | utilisation | mean wait (all) | blocks per job (large) | fragmentation | scheduler CPU |"
echo "|---|---|---|---|---|---|---|---|"
row() {
  name=$1; shift
  "$hq" sim --trace "$trace" --config "$here/sim-nvl-blocks.toml" --large-nodes 8 --json "$@" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("| %s | %.0f s | %.1f %% | %.1f %% | %.0f s | %.2f (%.2f) | %.0f | %.2f s |" % (sys.argv[1], r["large_mean_wait"],
      100 * r["large_within_hour"], 100 * r["utilization"], r["mean_wait"], r["mean_blocks"], r["mean_blocks_large"],
      r["mean_fragmentation"], r["scheduler_cpu_seconds"]))' "$name"
}
row "topology off" --no-topology
row "Slurm (best fit, no oracle)" --topo-delay 0
row "hq (oracle, delay $delay)" --topo-delay "$delay"
