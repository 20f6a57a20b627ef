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


def _cases() -> list[tuple[str, Any, Any, Any, float]]:
    """(name, dp-accounting's PMF, the toolkit's, the exact δ of the remove direction, Δ)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    def theirs(build: Any, *args: float, **kw: float) -> Any:
        return dense_pmfs(build(*args, pessimistic_estimate=True, **kw))[0]

    out = []
    for s, q, h in [(1.0, 0.01, 1e-4), (0.8, 0.1, 1e-4), (2.0, 1e-3, 1e-5)]:
        ref = theirs(pld.from_gaussian_mechanism, s, sampling_prob=q, value_discretization_interval=h)
        exact = lambda t, s=s, q=q: _delta(t, s, q, True)  # noqa: E731
        ours = sampled_gaussian_pmfs(s, q, h)[0]
        out.append((f"subsampled Gaussian σ={s}, q={q}, Δ={h}", ref, ours, exact, h))
    for b, q, h in [(1.0, 0.01, 1e-4), (0.5, 0.1, 1e-4), (2.0, 1e-3, 1e-5)]:
        ref = theirs(pld.from_laplace_mechanism, b, sampling_prob=q, value_discretization_interval=h)
        exact = lambda t, b=b, q=q: _laplace_delta(t, b, q, True)  # noqa: E731
        ours = sampled_laplace_pmfs(b, q, h)[0]
        out.append((f"subsampled Laplace b={b}, q={q}, Δ={h}", ref, ours, exact, h))
    for s, h in [(0.5, 1e-4), (5.0, 1e-4)]:
        ref = theirs(pld.from_gaussian_mechanism, s, value_discretization_interval=h)
        exact = lambda t, s=s: _gaussian_delta(t, s)  # noqa: E731
        out.append((f"Gaussian σ={s}, Δ={h}", ref, gaussian_pmf(1.0 / s, h), exact, h))
    return out


def main() -> None:
    print("| PMF | dp-accounting: points below δ, worst | toolkit: points below δ, worst |")
    print("|---|---|---|")
    for name, theirs, ours, delta, h in _cases():
        (b1, n1, w1), (b2, n2, w2) = _shortfall(theirs, h, delta), _shortfall(ours, h, delta)
        print(f"| {name} | {b1}/{n1}, {w1:.2g} | {b2}/{n2}, {w2:.2g} |")


if __name__ == "__main__":
    main()
