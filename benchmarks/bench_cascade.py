"""Speed benchmark of the cascading bandits of Wang et al. (2021): rounds per second (one round = one row's
round: a repetition, or a configuration × repetition of a stacked grid) of the toolkit against a
plain per-step NumPy loop (:func:`bandits.cascading.plain_loop.reference_actions`: every index from
the paper's formula, one repetition at a time) in the same run.

Run: ``python benchmarks/bench_cascade.py [--rounds T] [--reps R] [--loop-rounds T_loop] [--json]``

Rows (single-threaded, one process; CPU time ``time.process_time``, wall ``time.perf_counter``),
on the paper's setting (L = 20, K = 4, p = 0.2, Δ = 0.15; noise × 0.01):

* CascadeUCB1, Algorithm 2 (Laplace), Algorithm 3 (Gaussian), the fixed-length sound variant,
  Algorithm 1 (per-item hybrid counters), the private-counts variant: ``simulate`` with R
  repetitions, and the plain loop;
* Figure 1(e)'s grid: Algorithm 2 on 100 values of ε × R repetitions stacked in one agent
  (:func:`bandits.cascading.stacked.simulate_stacked`).

The compiled-kernel question was measured before writing any: a numba loop over rows needs
≈ 0.9 µs per row-round on this machine (the per-item square roots and divisions), no faster
than the vectorised NumPy step at 1000 rows, so there is none.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits.cascading.plain_loop import reference_actions  # noqa: E402
from bandits.cascading.policies import (  # noqa: E402
    CascadeDP,
    CascadeDPCounts,
    CascadeLDP,
    CascadeLDPFixed,
    CascadeUCB1,
)
from bandits.cascading.stacked import simulate_stacked  # noqa: E402
from bandits.engine.simulator import simulate  # noqa: E402
from bandits.environments.cascade import cascade_instance  # noqa: E402


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20_000, help="T for simulate (default 20000)")
    ap.add_argument("--reps", type=int, default=10, help="repetitions R (default 10)")
    ap.add_argument("--loop-rounds", type=int, default=3_000, help="T for the plain loop (default 3000)")
    ap.add_argument("--grid-rounds", type=int, default=2_000, help="T for the stacked grid (default 2000)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    env = cascade_instance()
    f = 0.01
    algos = [
        ("CascadeUCB1", CascadeUCB1()),
        ("Alg. 2 (Laplace)", CascadeLDP(1.0, "laplace", noise_factor=f)),
        ("Alg. 3 (Gaussian)", CascadeLDP(1.0, "gaussian", noise_factor=f)),
        ("fixed-length (Laplace)", CascadeLDPFixed(1.0, "laplace", noise_factor=f)),
        ("Alg. 1 (hybrid per item)", CascadeDP(1.0, noise_factor=f)),
        ("private counts (hybrid)", CascadeDPCounts(1.0, noise_factor=f)),
    ]
    rows: list[dict] = []
    for name, pol in algos:
        cpu, wall, _ = timed(lambda p=pol: simulate(p, env, a.rounds, a.reps, 0, progress=False))
        n = a.rounds * a.reps
        rows.append(
            {
                "row": f"{name}: simulate (R = {a.reps})",
                "rounds_per_s": n / wall,
                "cpu_s": cpu,
                "wall_s": wall,
            }
        )
        cpu, wall, _ = timed(lambda p=pol: reference_actions(p, env, a.loop_rounds, 0, 0))
        rows.append(
            {
                "row": f"{name}: plain per-step loop",
                "rounds_per_s": a.loop_rounds / wall,
                "cpu_s": cpu,
                "wall_s": wall,
            }
        )
    grid = [CascadeLDP(e, "laplace", noise_factor=f) for e in np.linspace(0.02, 2.0, 100)]
    cpu, wall, _ = timed(lambda: simulate_stacked(grid, env, a.grid_rounds, a.reps, 0))
    n = a.grid_rounds * a.reps * len(grid)
    rows.append(
        {
            "row": f"Alg. 2, 100 eps x R = {a.reps} stacked (1000 rows)",
            "rounds_per_s": n / wall,
            "cpu_s": cpu,
            "wall_s": wall,
        }
    )
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        width = max(len(r["row"]) for r in rows)
        print(f"{'row':{width}s}  {'rounds/s':>10s}  {'cpu s':>7s}  {'wall s':>7s}")
        for r in rows:
            print(f"{r['row']:{width}s}  {r['rounds_per_s']:10.0f}  {r['cpu_s']:7.2f}  {r['wall_s']:7.2f}")
    return rows


if __name__ == "__main__":
    main()
