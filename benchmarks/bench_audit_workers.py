"""Benchmark: default ``dpaudit run ALG`` with one process and with two worker processes.

Run ``python benchmarks/bench_audit_workers.py [--only KEY ...] [--json FILE]``. For each
algorithm, ``python -m dpaudit run ALG --json --workers W`` runs for W = 1 and W = 2, one after
the other, in fresh processes; the wall time of each, the speed-up, and whether the two runs
printed the same numbers (every field but the timings) are printed as a table. The simulation
and every audit phase (a pilot's candidate pairs, a certification's two sides, the releases
view's batches) are cut into fixed, seeded blocks sent to the pool in one batch, so the numbers
cannot depend on W. Run it on an otherwise idle machine: two workers need two free cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT = ("ts", "lazy-ucb", "dp-se", "cucb-ldp2", "dpucb-mat", "cascade-ldp-laplace-sound")
_TIMING = ("timing", "seconds", "elapsed", "executor")  # not numbers of the run


def _numbers(report: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of the JSON report by its path, without the timings."""
    if isinstance(report, dict):
        out: dict[str, Any] = {}
        for k, v in report.items():
            if k not in _TIMING:
                out.update(_numbers(v, f"{path}.{k}"))
        return out
    if isinstance(report, list):
        out = {}
        for i, v in enumerate(report):
            out.update(_numbers(v, f"{path}[{i}]"))
        return out
    return {path: report}


def run(alg: str, workers: int) -> tuple[float, dict[str, Any]]:
    """(wall seconds, the report's numbers) of one default run."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dpaudit", "run", alg, "--json", "--workers", str(workers)],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )
    return time.perf_counter() - t0, _numbers(json.loads(proc.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=list(DEFAULT), metavar="KEY")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args()
    rows = []
    print(f"{'algorithm':28s} {'1 process s':>12s} {'2 workers s':>12s} {'speed-up':>9s}  same numbers")
    for alg in args.only:
        t1, n1 = run(alg, 1)
        t2, n2 = run(alg, 2)
        same = n1 == n2
        rows.append({"algorithm": alg, "serial_s": t1, "two_workers_s": t2, "speedup": t1 / t2, "same": same})
        print(f"{alg:28s} {t1:12.2f} {t2:12.2f} {t1 / t2:9.2f}  {'yes' if same else 'NO'}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
