"""The Poisson-subsampled Gaussian's single-step PMFs (dpaudit.accounting.pld_sampled): the masses
are Algorithm 1's (from 60-digit δ) to 1e-11 relative, in both directions, and the hockey-stick
curve is at least the exact δ at every grid point checked (rounding only ever moved mass up)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs, sampled_laplace_pmfs

_CASES = [(1.0, 0.01, 1e-4), (0.8, 0.1, 1e-3), (2.0, 1e-3, 1e-5), (0.5, 0.9, 1e-3), (8.0, 0.3, 1e-4)]


def _delta(t: mp.mpf, sigma: float, q: float, remove: bool) -> mp.mpf:
    """The exact hockey-stick divergence of one direction at loss t: P(X < x(t)) − e^t Q(X < x(t))."""
    s, qq = mp.mpf(sigma), mp.mpf(q)
    c = mp.log(1 - qq)
    if remove:
        if t <= c:
            return 1 - mp.exp(t)
        x = -mp.mpf(1) / 2 - s**2 * mp.log(1 + mp.expm1(t) / qq)
        return (1 - qq) * mp.ncdf(x / s) + qq * mp.ncdf((x + 1) / s) - mp.exp(t) * mp.ncdf(x / s)
    if t >= -c:
        return mp.mpf(0)
    x = mp.mpf(1) / 2 + s**2 * mp.log(1 + mp.expm1(-t) / qq)
    return mp.ncdf(x / s) - mp.exp(t) * ((1 - qq) * mp.ncdf(x / s) + qq * mp.ncdf((x - 1) / s))


@pytest.mark.parametrize(("sigma", "q", "h"), _CASES)
def test_the_masses_are_algorithm_1s(sigma: float, q: float, h: float) -> None:
    with mp.workdps(60):
        for pmf, remove in zip(sampled_gaussian_pmfs(sigma, q, h), (True, False)):
            assert pmf.err == 0.0
            n = pmf.probs.size
            idx = sorted(set(np.linspace(3, n - 4, 30).astype(int).tolist()) | {n // 2})
            H = mp.mpf(h)
            for j in idx:
                i = pmf.lower + j
                dl, d0, dh = (_delta(m * H, sigma, q, remove) for m in (i - 1, i, i + 1))
                exact = ((dh - d0) - mp.exp(H) * (d0 - dl)) / mp.expm1(H)
                assert abs(pmf.probs[j] - exact) <= 1e-11 * exact + 1e-300, (remove, j, pmf.probs[j], exact)


@pytest.mark.parametrize(("sigma", "q", "h"), [(1.0, 0.01, 1e-3), (2.0, 1e-3, 1e-4), (0.5, 0.9, 1e-3)])
def test_hockey_stick_is_at_least_the_exact_delta(sigma: float, q: float, h: float) -> None:
    """Σ_j p_j (1 − e^{t − t_j})₊ + p_∞ at grid points t, each term in long double and the sum
    exact (fsum), against the 40-digit δ: never below it (by more than the terms' rounding, 2e-16
    relative; the masses' own inflation is ~1e-14), and within 1e-9 relative where δ > 1e-200."""
    for pmf, remove in zip(sampled_gaussian_pmfs(sigma, q, h), (True, False)):
        losses = (np.arange(pmf.probs.size) + pmf.lower) * np.longdouble(h)
        for i in np.linspace(pmf.lower + 1, pmf.lower + pmf.probs.size - 2, 25).astype(int):
            t = np.longdouble(int(i)) * np.longdouble(h)
            terms = (pmf.probs * np.maximum(0.0, -np.expm1(t - losses))).astype(float)
            ours = math.fsum([pmf.inf_mass, *terms.tolist()])
            with mp.workdps(40):
                exact = _delta(int(i) * mp.mpf(h), sigma, q, remove)
            assert ours >= exact * (1 - 2e-16), (remove, int(i), ours, exact)
            if exact > 1e-200:
                assert ours <= exact * (1 + 1e-9) + 1e-22


def test_total_mass_is_one_up_to_the_rounding_up() -> None:
    for remove, add in (sampled_gaussian_pmfs(1.0, 0.01, 1e-4), sampled_gaussian_pmfs(0.05, 0.5, 1e-3)):
        for p in (remove, add):
            assert 0.0 <= float(p.probs.sum()) + p.inf_mass - 1.0 < 1e-11


@settings(max_examples=40, deadline=None)
@given(st.floats(0.3, 10.0), st.floats(1e-4, 0.99), st.sampled_from([1e-3, 1e-2]))
def test_hockey_stick_dominates_across_the_parameter_range(sigma: float, q: float, h: float) -> None:
    """As above, at 6 grid points per direction, over σ in [0.3, 10] and q in [1e-4, 0.99]."""
    for pmf, remove in zip(sampled_gaussian_pmfs(sigma, q, h), (True, False)):
        assert 0.0 <= float(pmf.probs.sum()) + pmf.inf_mass - 1.0 < 1e-10
        losses = (np.arange(pmf.probs.size) + pmf.lower) * np.longdouble(h)
        for i in np.linspace(pmf.lower + 1, pmf.lower + pmf.probs.size - 2, 6).astype(int):
            t = np.longdouble(int(i)) * np.longdouble(h)
            terms = (pmf.probs * np.maximum(0.0, -np.expm1(t - losses))).astype(float)
            ours = math.fsum([pmf.inf_mass, *terms.tolist()])
            with mp.workdps(40):
                exact = _delta(int(i) * mp.mpf(h), sigma, q, remove)
            assert ours >= exact * (1 - 2e-16), (remove, int(i), ours, exact)


def _laplace_cdf(x: mp.mpf, mu: float, b: mp.mpf) -> mp.mpf:
    return mp.exp((x - mu) / b) / 2 if x < mu else 1 - mp.exp(-(x - mu) / b) / 2


def _laplace_delta(t: mp.mpf, b: float, q: float, remove: bool) -> mp.mpf:
    """The exact hockey-stick divergence of the Poisson-subsampled Laplace pair at loss t: the
    likelihood ratio is monotone in x, so δ = P(X < x*) − e^t Q(X < x*) with Laplace CDFs."""
    bb, qq, et = mp.mpf(b), mp.mpf(q), mp.exp(t)
    low, high = 1 - qq + qq * mp.exp(-1 / bb), 1 - qq + qq * mp.exp(1 / bb)  # the ratio's range
    if remove:  # (1 − q)L(0, b) + qL(−1, b) against L(0, b): ratio decreasing in x
        if et >= high:
            return mp.mpf(0)
        if et <= low:
            return 1 - et
        x = (-bb * mp.log((et - 1 + qq) / qq) - 1) / 2
        return (1 - qq) * _laplace_cdf(x, 0, bb) + qq * _laplace_cdf(x, -1, bb) - et * _laplace_cdf(x, 0, bb)
    # L(0, b) against (1 − q)L(0, b) + qL(1, b): loss > t where the inverse ratio is below e^−t
    if 1 / et <= low:
        return mp.mpf(0)
    if 1 / et > high:
        return 1 - et
    x = (bb * mp.log((1 / et - 1 + qq) / qq) + 1) / 2
    return _laplace_cdf(x, 0, bb) - et * ((1 - qq) * _laplace_cdf(x, 0, bb) + qq * _laplace_cdf(x, 1, bb))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 30.0), st.floats(1e-4, 0.99), st.sampled_from([1e-4, 1e-3]))
def test_sampled_laplace_curve_dominates_and_is_tight(b: float, q: float, h: float) -> None:
    """The subsampled Laplace's two atoms and continuous part, split on the grid: the curve (fsum of
    long-double terms) never below the exact δ at 12 grid points per direction, at most 1e-9
    relative (or 1e-15) above it there, total mass 1 up to the rounding up. (dp-accounting's construction,
    used before, fell below the exact δ at up to 25 of 60 grid points, by up to 3.9e-12.)"""
    for pmf, remove in zip(sampled_laplace_pmfs(b, q, h), (True, False)):
        assert pmf.err == 0.0 and 0.0 <= float(pmf.probs.sum()) + pmf.inf_mass - 1.0 < 1e-11
        losses = (np.arange(pmf.probs.size) + pmf.lower) * np.longdouble(h)
        for i in np.linspace(pmf.lower, pmf.lower + pmf.probs.size - 1, 12).astype(int):
            t = np.longdouble(int(i)) * np.longdouble(h)
            terms = (pmf.probs * np.maximum(0.0, -np.expm1(t - losses))).astype(float)
            ours = math.fsum([pmf.inf_mass, *terms.tolist()])
            with mp.workdps(40):
                exact = _laplace_delta(int(i) * mp.mpf(h), b, q, remove)
            assert ours >= exact * (1 - 2e-16), (remove, int(i), ours, exact)
            # the shares' lowering moves ~1e-15 of an atom's mass up: absolute, not relative
            assert ours <= exact * (1 + 1e-9) + 1e-15
