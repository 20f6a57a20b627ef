"""Benchmark: a 10^6-trial Gaussian audit (sampling + all bounds).

Run: ``python benchmarks/bench_audit.py [--trials N] [--repeats R]``.

One audit = sample N outputs of a μ = 1 Gaussian mechanism on each neighbour (2N normals),
build the Bonferroni threshold family (sort once + searchsorted, 2×300 thresholds, CP bounds),
and read off the GDP μ lower bound, the ε lower bound at δ = 1e-5 and a trade-off-curve audit
against the claimed 1-GDP curve. The baseline is sampling the same 2N normals alone.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dpaudit.audit import Bonferroni, audit_tradeoff_curve, gdp_tradeoff_curve, threshold_rates


def sample_only(rng: np.random.Generator, n: int) -> None:
    rng.normal(0.0, 1.0, n)
    rng.normal(1.0, 1.0, n)


def audit(rng: np.random.Generator, n: int) -> tuple[float, float, bool]:
    null = rng.normal(0.0, 1.0, n)
    alt = rng.normal(1.0, 1.0, n)
    rates = threshold_rates(null, alt, confidence=0.95, selection=Bonferroni(grid_size=300))
    mu = rates.mu_lower_bound().mu
    eps = rates.epsilon_lower_bound(1e-5).epsilon
    flagged = audit_tradeoff_curve(rates, gdp_tradeoff_curve(1.0)).violated
    return mu, eps, flagged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10**6, help="trials per neighbour (default 1e6)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n = args.trials
    rng = np.random.default_rng(0)
    audit(rng, 1000)  # warm-up (imports, scipy special functions)

    t_sample, t_audit = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        sample_only(rng, n)
        t_sample.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        mu, eps, flagged = audit(rng, n)
        t_audit.append(time.perf_counter() - t0)

    ts, ta = statistics.median(t_sample), statistics.median(t_audit)
    print(f"Gaussian audit, mu=1, {n:,} trials per neighbour ({2 * n:,} mechanism runs), 95% confidence")
    print(f"  last audit: mu_lower={mu:.4f} (true 1.0), eps_lower(1e-5)={eps:.4f} (true 4.377)")
    print(f"  claimed 1-GDP curve violated: {flagged}")
    print(f"  sampling {2 * n:,} normals only : {ts * 1e3:8.1f} ms (median of {args.repeats})")
    print(f"  full audit (sampling + bounds)  : {ta * 1e3:8.1f} ms  -> {2 * n / ta:,.0f} trials/s")
    print(f"  ratio audit / sampling          : {ta / ts:8.2f}x")
    print(f"  target < 1 s                    : {'OK' if ta < 1.0 else 'MISSED'}")


if __name__ == "__main__":
    main()
