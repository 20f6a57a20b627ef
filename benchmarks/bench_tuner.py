"""Benchmark: the (b, c) tuner over 10 candidates, T = 10^5, N = 5, 10 reps (the §5.1
instance of Ou, Avella Medina & Cummings 2024).

Run ``python benchmarks/bench_tuner.py [--mu 1] [--workers 2] [--only batched]``. Runs the tuner
twice in the same process — "before": every candidate simulated separately
(``tune_thompson(batch=False)``), "after": all candidates together (``batch=True``, the default,
:func:`bandits.engine.simulator.simulate_many`) — prints wall and CPU time of each (the CPU time of worker
processes is included when ``--workers`` > 1) and their ratio, checks that the two runs give
bit-identical regrets (and therefore the same table), and prints the table. Target: under 10 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from bandits import parse_env
from bandits.thompson.tuner import tune_thompson

SPEC = "bernoulli:0.75,0.625,0.5,0.375,0.25"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(env, args, batch: bool) -> tuple[object, float, float]:
    """One tuner run: (result, wall, CPU). With workers, a fresh pool per run, shut down before
    reading the CPU time (children count once they exit); the wall time excludes the shutdown."""
    executor = None
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(args.workers)
    cpu0, t0 = _cpu(), time.perf_counter()
    res = tune_thompson(
        env,
        args.horizon,
        target_mu=args.mu,
        reps=args.reps,
        seed=0,
        num=10,
        executor=executor,
        progress=False,
        batch=batch,
    )
    wall = time.perf_counter() - t0
    if executor is not None:
        executor.shutdown()
    return res, wall, _cpu() - cpu0


def _identical(a, b) -> bool:
    return a.table() == b.table() and all(
        np.array_equal(x.pseudo_regret, y.pseudo_regret)
        and np.array_equal(x.empirical_regret, y.empirical_regret)
        and np.array_equal(x.pulls, y.pulls)
        for x, y in zip(a.simulations, b.simulations, strict=True)
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--env", default=SPEC)
    ap.add_argument("--workers", type=int, default=1, help="processes (1: serial)")
    ap.add_argument("--only", choices=("separate", "batched"), help="run one variant only")
    args = ap.parse_args(argv)
    env = parse_env(args.env)
    load = os.getloadavg()[0]
    runs = {}
    for name, batch in (("separate", False), ("batched", True)):
        if args.only in (None, name):
            runs[name] = _timed(env, args, batch)
    res = runs[args.only or "batched"][0]
    print(res.table())
    print(f"best: b = {res.best.b}, c = {res.best.c:.6g}")
    print(
        f"tuner: {len(res.candidates)} candidates, T = {args.horizon}, N = {env.n_arms}, "
        f"{args.reps} reps, workers = {args.workers} (load average at start {load:.2f}; target < 10 s)"
    )
    for name, (_, wall, cpu) in runs.items():
        print(f"  {name:>8}: wall {wall:6.2f} s, CPU {cpu:6.2f} s")
    if len(runs) == 2:
        (sep, w0, c0), (bat, w1, c1) = runs["separate"], runs["batched"]
        same = _identical(sep, bat)
        print(f"  speed-up: wall {w0 / w1:.2f}x, CPU {c0 / c1:.2f}x; results bit-identical: {same}")
        if not same:
            raise SystemExit("batched and separate tuner results differ")


if __name__ == "__main__":
    main()
