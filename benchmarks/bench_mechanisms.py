"""Overhead of the output mechanisms over the plain numpy call, batches of 10^6 draws.

Run: ``python benchmarks/bench_mechanisms.py`` or ``python -m benchmarks.bench_mechanisms`` (the
latter needs ``benchmarks/__init__.py``: opacus installs a top-level ``benchmarks`` package
into site-packages that otherwise shadows this directory)
(``--n`` batch size, ``--repeats`` timing repeats; the minimum over repeats is reported).
Each mechanism's ``sample`` is timed against the equivalent hand-written numpy expression,
interleaved in the same run with identically seeded generators. The target is ratio < 1.5.
Exit status 1 if any ratio exceeds ``--max-ratio``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mechanisms.exponential import ExponentialMechanism  # noqa: E402
from mechanisms.gaussian import GaussianMechanism  # noqa: E402
from mechanisms.laplace import LaplaceMechanism  # noqa: E402
from mechanisms.randomized_response import RandomizedResponse  # noqa: E402
from mechanisms.report_noisy_max import GaussianReportNoisyMax, LaplaceReportNoisyMax  # noqa: E402


def _best(fn: Callable[[np.random.Generator], object], repeats: int) -> float:
    times = []
    for r in range(repeats):
        rng = np.random.default_rng(r)
        t0 = time.perf_counter()
        fn(rng)
        times.append(time.perf_counter() - t0)
    return min(times)


def cases(n: int) -> list[tuple[str, Callable, Callable]]:
    scores = np.array([3.0, 2.0, 2.5, 0.0, 1.0])
    sig = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
    lap = LaplaceMechanism(scale=2.0)
    gau = GaussianMechanism(sigma=1.5)
    rr2 = RandomizedResponse(epsilon=1.0)
    rr5 = RandomizedResponse(epsilon=1.0, num_categories=5)
    p2, p5 = rr2.keep_probability, rr5.keep_probability
    lrnm = LaplaceReportNoisyMax(scale=1.0, num_candidates=5)
    grnm = GaussianReportNoisyMax(sigmas=tuple(sig))
    em = ExponentialMechanism(epsilon=1.0, num_candidates=5)
    pe = em.output_distribution(scores)

    def rr5_plain(rng: np.random.Generator) -> np.ndarray:
        keep = rng.random(n) < p5
        return np.where(keep, 3, (3 + 1 + rng.integers(0, 4, size=n)) % 5)

    return [
        ("laplace", lambda rng: lap.sample(1.0, rng, size=n), lambda rng: 1.0 + rng.laplace(0.0, 2.0, n)),
        ("gaussian", lambda rng: gau.sample(1.0, rng, n), lambda rng: 1.0 + 1.5 * rng.standard_normal(n)),
        ("rr binary", lambda rng: rr2.sample(1, rng, size=n), lambda rng: np.where(rng.random(n) < p2, 1, 0)),
        ("rr k=5", lambda rng: rr5.sample(3, rng, size=n), rr5_plain),
        (
            "rnm laplace K=5",
            lambda rng: lrnm.sample(scores, rng, size=n),
            lambda rng: np.argmax(scores + rng.laplace(0.0, 1.0, size=(n, 5)), axis=1),
        ),
        (
            "rnm gaussian K=5",
            lambda rng: grnm.sample(scores, rng, size=n),
            lambda rng: np.argmax(scores + sig * rng.standard_normal((n, 5)), axis=1),
        ),
        ("exponential K=5", lambda rng: em.sample(scores, rng, size=n), lambda rng: rng.choice(5, n, p=pe)),
    ]


def run(n: int = 1_000_000, repeats: int = 7) -> list[tuple[str, float, float, float]]:
    rows = []
    for name, mech_fn, plain_fn in cases(n):
        mech_fn(np.random.default_rng(0))  # warm-up (imports, caches)
        plain_fn(np.random.default_rng(0))
        t_mech = _best(mech_fn, repeats)
        t_plain = _best(plain_fn, repeats)
        rows.append((name, t_mech, t_plain, t_mech / t_plain))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--max-ratio", type=float, default=1.5)
    args = ap.parse_args(argv)
    rows = run(args.n, args.repeats)
    print(f"batch n = {args.n:,}, best of {args.repeats} repeats")
    print(f"{'mechanism':<18} {'mechanism ms':>13} {'numpy ms':>10} {'ratio':>7}")
    for name, tm, tp, ratio in rows:
        print(f"{name:<18} {1e3 * tm:>13.2f} {1e3 * tp:>10.2f} {ratio:>7.3f}")
    worst = max(r[3] for r in rows)
    print(f"worst ratio {worst:.3f} (target < {args.max_ratio})")
    return 0 if math.isfinite(worst) and worst < args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
