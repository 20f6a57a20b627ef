"""The Gaussian's single-step PMF (dpaudit.accounting.pld_gaussian): every mass at least its exact
connect-the-dots value and barely above it, its hockey-stick curve at least the Gaussian's δ(t)
everywhere, the same PMF as dp-accounting's up to dp-accounting's rounding."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting.pld_gaussian import GL_W, GL_X, gaussian_pmf
from dpaudit.accounting.pld_steps import dense_pmfs
from tests.mp_reference import pmf_curve

_CASES = [(1.0, 1e-3), (0.2, 1e-4), (2.0, 1e-4), (20.0, 1e-3), (1e-3, 1e-4), (1e-5, 1e-4), (300.0, 0.5)]


def test_the_gauss_legendre_rule_is_numpys() -> None:
    x, w = np.polynomial.legendre.leggauss(10)
    assert np.allclose(GL_X, (x + 1) / 2, rtol=0, atol=1e-16)
    assert np.allclose(GL_W, w / 2, rtol=0, atol=1e-16)


def _exact_masses(mu: float, h: float, idx: list[int], p_lower: int, p_size: int) -> list[mp.mpf]:
    """Connect-the-dots masses at PMF indices ``idx`` from 40-digit integrals of the split shares
    against the loss density N(μ²/2, μ²), with the tails as the construction places them."""
    m, s, H = mp.mpf(mu) ** 2 / 2, mp.mpf(mu), mp.mpf(h)
    dens = lambda l: mp.npdf(l, m, s)  # noqa: E731
    g = mp.expm1(H)
    out = []
    for j in idx:
        t = (p_lower + j) * H
        to_high = lambda l, t=t: (1 - mp.exp(t - H - l)) / (1 - mp.exp(-H)) * dens(l)  # noqa: E731
        to_low = lambda l, t=t: mp.expm1(t + H - l) / g * dens(l)  # noqa: E731
        left = mp.quad(to_high, [t - H, t]) if j else 0
        right = mp.quad(to_low, [t, t + H]) if j < p_size - 1 else 0
        if j == 0:
            right += mp.ncdf((t - m) / s)
        out.append(left + right)
    return out


@pytest.mark.parametrize(("mu", "h"), _CASES)
def test_every_mass_is_at_least_its_exact_value_and_barely_above(mu: float, h: float) -> None:
    p = gaussian_pmf(mu, h)
    n = p.probs.size
    idx = sorted({0, 1, 2, n // 2, n - 3, n - 2, n - 1} | set(np.linspace(0, n - 1, 24).astype(int).tolist()))
    with mp.workdps(40):
        exact = _exact_masses(mu, h, idx, p.lower, n)
        tail = mp.ncdf(-(p.lower + n - 1) * mp.mpf(h) + mp.mpf(mu) ** 2 / 2, 0, mu)
        for j, e in zip(idx, exact):
            assert e <= p.probs[j] <= e * (1 + 1e-11), (j, p.probs[j], e)
        assert tail <= p.inf_mass <= tail * (1 + 1e-11)
    assert p.err == 0.0


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 30.0), st.sampled_from([1e-3, 0.01, 0.05]))
def test_hockey_stick_is_at_least_the_gaussians_delta_everywhere(mu: float, h: float) -> None:
    """δ_μ(t) = Φ(−t/μ + μ/2) − e^t Φ(−t/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13) against the PMF's
    curve (:func:`tests.mp_reference.pmf_curve`, rounded once) at grid points (equal up to the
    masses' inflation: at most 1e-9 relative above) and between them: never below."""
    p = gaussian_pmf(mu, h)
    lo, hi = max(-5.0, p.lower * h), (p.lower + p.probs.size - 1) * h
    for t in np.r_[np.linspace(lo, hi, 12), np.ceil(np.linspace(lo, hi, 12) / h) * h]:
        on_grid = abs(t / h - round(t / h)) < 1e-9
        ours = pmf_curve(p, h, int(round(t / h)) if on_grid else float(t))
        with mp.workdps(30):
            tm, mm = (int(round(t / h)) * mp.mpf(h) if on_grid else mp.mpf(float(t))), mp.mpf(mu)
            exact = mp.ncdf(-tm / mm + mm / 2) - mp.exp(tm) * mp.ncdf(-tm / mm - mm / 2)
        assert ours >= exact * (1 - 2e-16), (t, ours, exact)
        if exact > 1e-200 and on_grid:
            assert ours <= exact * (1 + 1e-9) + 1e-22, (t, ours, exact)


@pytest.mark.parametrize(("sigma", "h"), [(1.0, 1e-3), (5.0, 1e-4), (0.5, 1e-3)])
def test_the_same_pmf_as_dp_accountings_up_to_its_rounding(sigma: float, h: float) -> None:
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref_pld = pld.from_gaussian_mechanism(standard_deviation=sigma, sensitivity=1.0,
                                          pessimistic_estimate=True, value_discretization_interval=h)
    (ref,) = dense_pmfs(ref_pld)
    ours = gaussian_pmf(1.0 / sigma, h)
    lo = max(ours.lower, ref.lower)
    hi = min(ours.lower + ours.probs.size, ref.lower + ref.probs.size)
    a = ours.probs[lo - ours.lower + 2 : hi - ours.lower - 2]
    b = ref.probs[lo - ref.lower + 2 : hi - ref.lower - 2]
    assert np.allclose(a, b, rtol=0, atol=1e-11)  # dp-accounting's masses err by up to ~1e-11
    assert math.isclose(ours.inf_mass, 0.5 * math.erfc(10 / math.sqrt(2)), rel_tol=1e-12)
