"""Benchmark: the (b, c) tuner over 10 candidates, T = 10^5, N = 5 (seed 004 §5.1), 10 reps.

Run ``python benchmarks/bench_tuner.py [--mu 1] [--workers 2]``. Prints wall and CPU time
(the CPU time of worker processes is included when ``--workers`` > 1) and the table.
Target: under 10 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from bandits import parse_env
from bandits.tuner import tune_thompson

SPEC = "bernoulli:0.75,0.625,0.5,0.375,0.25"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--env", default=SPEC)
    ap.add_argument("--workers", type=int, default=1, help="processes (1: serial)")
    args = ap.parse_args(argv)
    env = parse_env(args.env)
    executor = None
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(args.workers)
    load = os.getloadavg()[0]
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
    )
    wall = time.perf_counter() - t0
    if executor is not None:
        executor.shutdown()
    cpu = _cpu() - cpu0
    print(res.table())
    print(f"best: b = {res.best.b}, c = {res.best.c:.6g}")
    print(
        f"tuner: {len(res.candidates)} candidates, T = {args.horizon}, N = {env.n_arms}, "
        f"{args.reps} reps, workers = {args.workers}: wall {wall:.2f} s, CPU {cpu:.2f} s "
        f"(load average at start {load:.2f}; target < 10 s)"
    )


if __name__ == "__main__":
    main()
