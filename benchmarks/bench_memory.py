"""Memory benchmark: peak RSS of Gaussian TS at R = 100, N = 50, T = 1e5 (issue: under 300 MB).

Run: ``python benchmarks/bench_memory.py [--horizon T] [--reps R] [--arms N]``

Each configuration runs in a fresh subprocess (peak RSS = ``ru_maxrss`` of that process):

1. the simulator's default, chunks sized to its 64 MiB budget (:func:`bandits.engine.simulator.chunk_rounds`);
2. the baseline: fixed 8192-round chunks (the old default), in the same run.

Both must give the same regret to the last bit (chunking never changes the floats); the script
checks it and prints the ratio of peaks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = """
import json, resource, sys, time
import numpy as np
from bandits import BernoulliEnv, GaussianTS, simulate
T, R, N, chunk = (int(x) for x in sys.argv[1:5])
env = BernoulliEnv(tuple(np.linspace(0.75, 0.25, N)))
t = time.perf_counter()
res = simulate(GaussianTS(), env, T, R, seed=0, progress=False, chunk_size=chunk or None)
print(json.dumps({"seconds": time.perf_counter() - t, "final": res.final(),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(T: int, R: int, N: int, chunk: int) -> dict:
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(T), str(R), str(N), str(chunk)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=100_000)
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--arms", type=int, default=50)
    a = p.parse_args()
    budget = measure(a.horizon, a.reps, a.arms, 0)
    fixed = measure(a.horizon, a.reps, a.arms, 8192)
    same = budget["final"] == fixed["final"]
    print(f"Gaussian TS, T = {a.horizon}, R = {a.reps}, N = {a.arms}")
    print(f"  budgeted chunks : peak {budget['peak_mb']:7.1f} MB, {budget['seconds']:.1f} s")
    print(f"  8192-round chunks: peak {fixed['peak_mb']:7.1f} MB, {fixed['seconds']:.1f} s")
    print(f"  peak ratio {budget['peak_mb'] / fixed['peak_mb']:.3f}; identical regret: {same}")
    if not same:
        sys.exit("regret differs between chunkings")


if __name__ == "__main__":
    main()
