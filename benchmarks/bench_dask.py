"""Benchmark: the same work in one process and on a Dask cluster of two single-thread worker
processes (``dask.distributed.LocalCluster``), the numbers compared.

Run ``python benchmarks/bench_dask.py [--scale reduced|full] [--audit-trials N] [--json FILE]``
on an otherwise idle two-core machine. Two jobs:

1. **An experiment grid**: the private stochastic-bandit grid of Hu et al. (2024), §6 (two
   instances × three ε × four algorithms; ``--scale full``: T = 10⁶, 20 runs per cell, the
   notebook's full scale), through :func:`bandits.experiments.private_stochastic_bandits.bandit_grid`;
   its cells are the tasks.
2. **A 2·10⁵-trial audit**: ``dpaudit run lazy-ucb --audit-trials 200000`` through
   :func:`bandits.run.run_algorithm` (simulation, accounting, ledger check, and the audit's pilot
   and certification batches as the tasks).

Each job runs with no executor and then with ``client.get_executor()`` of a fresh two-worker
cluster (its start-up time reported apart); wall seconds, the speed-up, and whether every number
(all but the timings) is the same.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

_TIMING = ("seconds", "cpu_seconds", "elapsed", "cpu", "timing", "timings", "executor")


def numbers(x: Any) -> Any:
    """``x`` without its timings (every other number kept, in place)."""
    if isinstance(x, dict):
        return {k: numbers(v) for k, v in x.items() if k not in _TIMING}
    if isinstance(x, (list, tuple)):
        return [numbers(v) for v in x]
    return x


def grid_job(scale: str) -> Callable[[Any], Any]:
    from bandits.experiments.grid import SCALES
    from bandits.experiments.private_stochastic_bandits import bandit_grid

    return lambda executor: bandit_grid(SCALES[scale], executor)


def audit_job(trials: int) -> Callable[[Any], Any]:
    def run(executor: Any) -> Any:
        from bandits.run import run_algorithm

        return run_algorithm("lazy-ucb", reps=10, seed=0, audit_trials=trials, executor=executor,
                             progress=False).to_dict()

    return run


def _warm_worker() -> None:
    """Import what the jobs run and load the compiled kernels in a worker."""
    import bandits.experiments.private_stochastic_bandits  # noqa: F401
    import bandits.run  # noqa: F401
    from bandits.engine import compiled

    compiled.available()


def timed(job: Callable[[Any], Any], executor: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = job(executor)
    return time.perf_counter() - t, out


def compare(name: str, job: Callable[[Any], Any], warm: Callable[[Any], Any]) -> dict[str, Any]:
    """One job alone and on a fresh two-worker cluster, each after ``warm`` (a small run of the
    same code: imports and numba's kernels loaded in this process and in every worker, as in a
    long-lived cluster; its time is the cluster's start-up)."""
    from dask.distributed import Client, LocalCluster

    warm(None)
    alone_s, alone = timed(job, None)
    t = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(_warm_worker)
        start_s = time.perf_counter() - t
        dask_s, dasked = timed(job, client.get_executor())
    row = {"job": name, "one_process_s": alone_s, "dask_s": dask_s, "cluster_start_s": start_s,
           "speedup": alone_s / dask_s, "same": numbers(alone) == numbers(dasked)}
    print(f"{name}: one process {alone_s:.1f} s, Dask 2 workers {dask_s:.1f} s "
          f"(+{start_s:.1f} s to start the cluster): {row['speedup']:.2f}x, same numbers: {row['same']}",
          flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=("reduced", "full"), default="full")
    ap.add_argument("--audit-trials", type=int, default=200_000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.json is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        print(f"bench_dask: --json: the folder of {args.json} does not exist", file=sys.stderr)
        return 2
    rows = [compare(f"experiment grid ({args.scale})", grid_job(args.scale), grid_job("reduced")),
            compare(f"lazy-ucb audit ({args.audit_trials} trials)", audit_job(args.audit_trials),
                    audit_job(200))]
    if args.json is not None:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
