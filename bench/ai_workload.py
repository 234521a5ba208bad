#!/usr/bin/env python3
"""A synthetic AI-cluster workload in Standard Workload Format, for `hq sim` (issue 19).

Racks of 18 nodes (NVL72-style blocks); a mix of 1-node jobs (debugging, evaluation,
inference) and 8/16/32/64-node training jobs. Seeded: the same arguments give the same
trace on every machine (Python's random.Random is portable). Arrivals are Poisson at the
rate that offers `--load` of the cluster's node-hours; run times are log-normal; limits
are what users ask (1.2-3x the run time, rounded up to 15 minutes).

    bench/ai_workload.py --seed 1 --jobs 4000 > /tmp/ai.swf
    hq sim --trace /tmp/ai.swf --config bench/sim-nvl-blocks.toml
"""
import argparse
import math
import random
import sys

# (nodes, share of jobs, median run time in seconds)
MIX = [(1, 0.62, 20 * 60), (8, 0.14, 90 * 60), (16, 0.12, 2 * 3600), (32, 0.08, 3 * 3600), (64, 0.04, 4 * 3600)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=4000)
    ap.add_argument("--nodes", type=int, default=144, help="nodes in the cluster (default 144: 8 racks of 18)")
    ap.add_argument("--cpus", type=int, default=144, help="CPUs per node (procs = nodes x this)")
    ap.add_argument("--load", type=float, default=0.9, help="offered load, a share of the node-hours (default 0.9)")
    a = ap.parse_args()
    if a.jobs < 1 or a.nodes < 64 or a.cpus < 1 or not 0 < a.load < 2:
        sys.exit("ai_workload.py: --jobs >= 1, --nodes >= 64, --cpus >= 1 and 0 < --load < 2")
    rng = random.Random(a.seed)
    sizes, weights, medians = zip(*MIX)
    jobs = []
    for _ in range(a.jobs):
        i = rng.choices(range(len(MIX)), weights)[0]
        run = min(24 * 3600, max(60, int(rng.lognormvariate(math.log(medians[i]), 0.8))))
        limit = int(math.ceil(run * rng.uniform(1.2, 3.0) / 900.0)) * 900
        jobs.append((sizes[i], run, limit))
    node_seconds = sum(n * run for n, run, _ in jobs)
    mean_gap = node_seconds / (a.nodes * a.load) / a.jobs  # seconds between arrivals
    print("; hq synthetic AI-cluster workload (bench/ai_workload.py --seed %d --jobs %d --nodes %d --cpus %d --load %g)"
          % (a.seed, a.jobs, a.nodes, a.cpus, a.load))
    print("; sizes are whole nodes x %d CPUs" % a.cpus)
    t = 0.0
    for jid, (nodes, run, limit) in enumerate(jobs, 1):
        t += rng.expovariate(1.0 / mean_gap)
        procs = nodes * a.cpus
        user = rng.randint(1, 40)
        # id submit wait run alloc_procs cpu mem req_procs req_time req_mem status uid gid app queue part prec think
        print("%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 -1 1 1 -1 -1" % (jid, int(t), run, procs, procs, limit, user))


if __name__ == "__main__":
    main()
