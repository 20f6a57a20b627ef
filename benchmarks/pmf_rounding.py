"""Benchmark: do single-step PLD PMFs stay above the mechanism in floating point?

Run ``python benchmarks/pmf_rounding.py``. For the Gaussian, the Poisson-subsampled Gaussian and
the Poisson-subsampled Laplace, the hockey-stick curve of dp-accounting's pessimistic
connect-the-dots PMF and of the toolkit's (``dpaudit.accounting.pld_gaussian``,
``pld_sampled``) at 60 grid points of the remove direction, each curve summed exactly (fsum of
long-double terms), against the exact δ in 40-digit mpmath: how many points fall below it and by
how much (relative). The exact δ are those of ``tests/test_pld_sampled.py`` and
``tests/test_pld_gaussian.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpaudit.accounting.pld_gaussian import gaussian_pmf  # noqa: E402
from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs, sampled_laplace_pmfs  # noqa: E402
from dpaudit.accounting.pld_steps import dense_pmfs  # noqa: E402
from tests.mp_reference import pmf_curve  # noqa: E402
from tests.test_pld_sampled import _delta, _laplace_delta  # noqa: E402


def _gaussian_delta(t: mp.mpf, sigma: float) -> mp.mpf:
    mu = 1 / mp.mpf(sigma)
    return mp.ncdf(-t / mu + mu / 2) - mp.exp(t) * mp.ncdf(-t / mu - mu / 2)


def _shortfall(pmf: Any, h: float, delta: Any) -> tuple[int, int, float]:
    """(points below the exact δ, points checked, worst relative shortfall)."""
    below, n, worst = 0, 0, 0.0
    for i in np.linspace(pmf.lower + 1, pmf.lower + pmf.probs.size - 2, 60).astype(int):
        with mp.workdps(40):
            exact = delta(int(i) * mp.mpf(h))
        if exact > 1e-300:
            n += 1
            r = float((pmf_curve(pmf, h, int(i)) - exact) / exact)
            if r < -2e-16:
                below, worst = below + 1, min(worst, r)
    return below, n, worst


def main() -> None:
    from dp_accounting.pld import privacy_loss_distribution as pld

    rows = []
    for sigma, q, h in [(1.0, 0.01, 1e-4), (0.8, 0.1, 1e-4), (2.0, 1e-3, 1e-5)]:
        theirs = dense_pmfs(pld.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=True,
                                                        value_discretization_interval=h))[0]  # fmt: skip
        ours = sampled_gaussian_pmfs(sigma, q, h)[0]
        d = lambda t, s=sigma, qq=q: _delta(t, s, qq, True)  # noqa: E731
        name = f"subsampled Gaussian σ={sigma}, q={q}, Δ={h}"
        rows.append((name, _shortfall(theirs, h, d), _shortfall(ours, h, d)))
    for b, q, h in [(1.0, 0.01, 1e-4), (0.5, 0.1, 1e-4), (2.0, 1e-3, 1e-5)]:
        theirs = dense_pmfs(pld.from_laplace_mechanism(b, pessimistic_estimate=True, sampling_prob=q,
                                                       value_discretization_interval=h))[0]  # fmt: skip
        ours = sampled_laplace_pmfs(b, q, h)[0]
        d = lambda t, bb=b, qq=q: _laplace_delta(t, bb, qq, True)  # noqa: E731
        name = f"subsampled Laplace b={b}, q={q}, Δ={h}"
        rows.append((name, _shortfall(theirs, h, d), _shortfall(ours, h, d)))
    for sigma, h in [(0.5, 1e-4), (5.0, 1e-4)]:
        theirs = dense_pmfs(pld.from_gaussian_mechanism(sigma, pessimistic_estimate=True,
                                                        value_discretization_interval=h))[0]  # fmt: skip
        ours = gaussian_pmf(1.0 / sigma, h)
        d = lambda t, s=sigma: _gaussian_delta(t, s)  # noqa: E731
        rows.append((f"Gaussian σ={sigma}, Δ={h}", _shortfall(theirs, h, d), _shortfall(ours, h, d)))
    print("| PMF | dp-accounting: points below δ, worst | toolkit: points below δ, worst |")
    print("|---|---|---|")
    for name, (b1, n1, w1), (b2, n2, w2) in rows:
        print(f"| {name} | {b1}/{n1}, {w1:.2g} | {b2}/{n2}, {w2:.2g} |")


if __name__ == "__main__":
    main()
