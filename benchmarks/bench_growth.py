"""Benchmark: how simulation time and memory grow with the horizon T and the number of arms N.

Run ``python benchmarks/bench_growth.py [--algorithms ts lazy-ucb] [--horizons 1e4 1e5 1e6]
[--arms 5 50 500] [--reps 10] [--json FILE]``. Each cell simulates the algorithm with its default
engine ("auto") and its ``dpaudit run`` options (but :data:`FIXED`) on a Bernoulli instance with
means evenly spaced in [0.1, 0.9], R repetitions, in a fresh process (CPU seconds of the
simulation after a small warm-up run, which also compiles the numba kernels; peak resident memory
of the process). The table gives each cell's time and memory
and the growth factor of the time from the previous horizon (same N) and from the previous arm
count (same T): an algorithm whose cost is linear in T and N grows by about 10× per step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FIXED = {"ts": {"prepulls": 0, "variance_scale": 1.0}}
"""Options held fixed across the cells: ``dpaudit run ts`` picks (b, c) by T (b = 1897 pre-pulls
per arm at T = 10⁵: 95 % of the rounds at N = 50 are pre-pulls), which would mix the algorithm's
schedule into the engine's growth; (b, c) = (0, 1) is Algorithm 1 of Ou, Avella Medina & Cummings."""

_CELL = """
import json, resource, sys, time
import numpy as np
from bandits.engine.simulator import simulate
from bandits.environments import BernoulliEnv
from bandits.registry import get
alg, N, T, R = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spec = get(alg)
env = BernoulliEnv(tuple(float(m) for m in np.linspace(0.9, 0.1, N)))
options = {o.dest: o.default for o in spec.options} | json.loads(sys.argv[5])
policy = spec.configure(options, env, T).policy
simulate(policy, env, min(T, 2000), R, 0, progress=False)
t = time.process_time()
res = simulate(policy, env, T, R, 0, progress=False)
cpu = time.process_time() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps({"cpu_s": cpu, "peak_mib": rss, "regret": float(res.pseudo_regret[:, -1].mean())}))
"""


def cell(alg: str, n_arms: int, horizon: int, reps: int) -> dict[str, Any]:
    """One cell in a fresh process: CPU seconds, peak memory (MiB), mean final pseudo-regret."""
    proc = subprocess.run(
        [sys.executable, "-c", _CELL, alg, str(n_arms), str(horizon), str(reps),
         json.dumps(FIXED.get(alg, {}))],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithms", nargs="+", default=["ts", "lazy-ucb"])
    ap.add_argument("--horizons", nargs="+", type=float, default=[1e4, 1e5, 1e6])
    ap.add_argument("--arms", nargs="+", type=int, default=[5, 50, 500])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    head = ("algorithm", "N", "T", "CPU s", "MiB", "x per 10T", "x per 10N")
    print("{:10s} {:>5s} {:>9s} {:>9s} {:>7s} {:>10s} {:>10s}".format(*head))
    for alg in args.algorithms:
        for n in args.arms:
            for h in (int(x) for x in args.horizons):
                row = {"algorithm": alg, "arms": n, "horizon": h, **cell(alg, n, h, args.reps)}
                prev_t = [r for r in rows if r["algorithm"] == alg and r["arms"] == n and r["horizon"] < h]
                prev_n = [r for r in rows if r["algorithm"] == alg and r["horizon"] == h and r["arms"] < n]
                row["growth_T"] = row["cpu_s"] / prev_t[-1]["cpu_s"] if prev_t else None
                row["growth_N"] = row["cpu_s"] / prev_n[-1]["cpu_s"] if prev_n else None
                rows.append(row)
                gt = f"{row['growth_T']:10.1f}" if row["growth_T"] else f"{'':10s}"
                gn = f"{row['growth_N']:10.1f}" if row["growth_N"] else f"{'':10s}"
                cpu, mib = row["cpu_s"], row["peak_mib"]
                print(f"{alg:10s} {n:5d} {h:9d} {cpu:9.2f} {mib:7.0f} {gt} {gn}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
