"""Benchmark: every registered algorithm family against a plain NumPy loop of the same algorithm.

Run ``python benchmarks/bench_families.py [--families NAME ...] [--scale S] [--json FILE]``.

For each case of :mod:`benchmarks.family_loops` (one or more per family), in one process, one
core: the toolkit's simulation (``simulate`` of the policy ``dpaudit run ALG`` builds, default
engine, regret tracked at 50 checkpoints as ``dpaudit run`` does) and the family's plain NumPy
loop — one round at a time, vectorised across repetitions, written from the paper independently
of the toolkit — on the same instance, options, horizon T and repetitions R; where the family's
best engine is a per-round loop, also the same loop compiled by numba. CPU seconds (best of
``--repeat``, after a warm-up run at a small horizon that also compiles numba), the throughput
ratio (loop time / toolkit time: above 1 the toolkit is faster) and both mean final regrets
± s.e. (independent random numbers: they agree within a few s.e. when the algorithms are the
same; ``tests/test_family_loops.py`` checks it at a small size).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from benchmarks.family_loops import Case  # noqa: E402


def all_cases() -> list[Case]:
    """Every family's cases, in registry order of their first algorithm."""
    from benchmarks.family_loops import catalogue

    return catalogue.cases()


def project_policy(case: Case, horizon: int) -> tuple[Any, Any]:
    """(policy, environment) exactly as ``dpaudit run ALG --env ENV -T horizon`` builds them."""
    from bandits.environments import parse_env
    from bandits.registry import get

    spec = get(case.algorithm)
    env = (spec.env_parser or parse_env)(case.env or spec.default_env)
    return spec.configure(case.options, env, horizon).policy, env


def project_regret(case: Case, horizon: int, reps: int, seed: int) -> np.ndarray:
    """The toolkit's final pseudo-regret per repetition."""
    from bandits.engine.simulator import simulate

    policy, env = project_policy(case, horizon)
    res = simulate(policy, env, horizon, reps, seed, progress=False)
    return np.asarray(res.pseudo_regret[:, -1], dtype=float)


def cpu_seconds(fn: Any, repeat: int) -> tuple[float, Any]:
    """Best CPU time of ``repeat`` calls and the last result."""
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def mean_se(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


def run_case(case: Case, scale: float, repeat: int, seed: int) -> dict[str, Any]:
    """One row: CPU seconds of the toolkit, the NumPy loop and the numba loop, ratios, regrets."""
    T = max(1000, int(case.horizon * scale))
    R = case.reps
    warm = min(T, 2000)
    project_regret(case, warm, R, seed)
    case.loop(warm, R, seed)
    if case.numba_loop is not None:
        case.numba_loop(warm, R, seed)
    ours_s, ours = cpu_seconds(lambda: project_regret(case, T, R, seed), repeat)
    loop_s, loop = cpu_seconds(lambda: case.loop(T, R, seed), repeat)
    row: dict[str, Any] = {"family": case.family, "algorithm": case.algorithm, "options": case.options,
                           "env": case.env, "horizon": T, "reps": R, "toolkit_s": ours_s,
                           "numpy_loop_s": loop_s, "ratio_numpy": loop_s / ours_s,
                           "toolkit_regret": mean_se(ours), "numpy_loop_regret": mean_se(loop),
                           "note": case.note}
    if case.numba_loop is not None:
        nb_s, nb = cpu_seconds(lambda: case.numba_loop(T, R, seed), repeat)
        row.update(numba_loop_s=nb_s, ratio_numba=nb_s / ours_s, numba_loop_regret=mean_se(nb))
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The README table (markdown)."""
    lines = ["| family | algorithm (options) | T × R | toolkit | NumPy loop | toolkit / NumPy | numba loop | "
             "toolkit / numba | regret: toolkit vs loop |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        nb = f"{r['numba_loop_s']:.2f} s" if "numba_loop_s" in r else "-"
        nbr = f"{r['ratio_numba']:.2f}×" if "ratio_numba" in r else "-"
        (a, sa), (b, sb) = r["toolkit_regret"], r["numpy_loop_regret"]
        opts = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                         for k, v in r["options"].items())
        lines.append(f"| {r['family']} | `{r['algorithm']}` ({opts}) | {r['horizon']:.0e} × {r['reps']} | "
                     f"{r['toolkit_s']:.2f} s | {r['numpy_loop_s']:.2f} s | {r['ratio_numpy']:.2f}× | {nb} | "
                     f"{nbr} | {a:.0f} ± {sa:.0f} vs {b:.0f} ± {sb:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="*", default=None, help="only these families")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every case's horizon (>= 1000 rounds)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, help="write the rows as JSON to this file")
    args = ap.parse_args(argv)
    if args.json is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        print(f"bench_families: --json: the folder of {args.json} does not exist", file=sys.stderr)
        return 2
    cases = [c for c in all_cases() if args.families is None or c.family in args.families]
    if not cases:
        print("bench_families: --families matches no family", file=sys.stderr)
        return 2
    rows = []
    for case in cases:
        rows.append(run_case(case, args.scale, args.repeat, args.seed))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    if args.json is not None:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "scale": args.scale, "repeat": args.repeat, "seed": args.seed}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
