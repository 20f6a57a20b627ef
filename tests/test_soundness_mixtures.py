"""Soundness of the mixture events' RDP curves (:mod:`dpaudit.accounting.mixtures`) against exact
references (mpmath, :mod:`tests.mixture_reference`): the Gaussian and Poisson-subsampled Gaussian
closed forms they reduce to, the exact Rényi divergences of a truncated Poisson sample's output
mixtures for one neighbouring pair, and the truncation weights against exact binomial tails. The
mixture of Gaussians' property test against quadrature is in tests/test_soundness.py (with the
other issue-23 events)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpaudit.events_ml import MixtureOfGaussiansEvent, TruncatedSubsampledGaussianEvent
from tests.mixture_reference import (
    binomial_tail,
    certified_curve,
    mixture_renyi,
    mixtures_renyi,
    sampled_gaussian_renyi,
    truncated_pair,
)

ORDERS3 = np.array([1.05, 2.0, 8.0])


def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("c,sigma", [(1.0, 1.0), (0.3, 2.0), (2.0, 0.7)])
def test_one_component_mixture_is_the_gaussian(c, sigma):
    """One component: the Gaussian's αc²/(2σ²) exactly (Mironov 2017, Prop. 7), the quadrature
    reference agreeing with it; ours at least it and within 1e-12."""
    leaf = MixtureOfGaussiansEvent(sigma, (c,), (1.0,))
    for a, ours in zip(ORDERS3, certified_curve(leaf, ORDERS3)):
        closed = mp.mpf(a) * mp.mpf(c) ** 2 / (2 * mp.mpf(sigma) ** 2)
        assert abs(mixture_renyi(sigma, (c,), (1.0,), a) - closed) <= closed * mp.mpf(10) ** -15
        assert closed <= mp.mpf(float(ours)) <= closed * (1 + mp.mpf(10) ** -12)


SAMPLED_CASES = [(0.01, 1.0, 1.0), (0.3, 1.5, 2.0), (0.9, 0.5, 1.0)]


@pytest.mark.slow
@pytest.mark.parametrize("q,c,sigma", SAMPLED_CASES)
def test_two_point_mixture_and_uncut_truncation_are_the_sampled_gaussian(q, c, sigma):
    """A mixture on {0, c} and a truncated Poisson sample whose limit is never reached are the
    Poisson-subsampled Gaussian: ours at least its closed form at integer orders (Mironov, Talwar
    & Zhang 2019, Sec. 3.3) and within 1e-9 of it; the quadrature references agree with it."""
    orders = np.array([2.0, 3.0, 8.0])
    mog = certified_curve(MixtureOfGaussiansEvent(sigma, (0.0, c), (1.0 - q, q)), orders)
    trunc = certified_curve(TruncatedSubsampledGaussianEvent(12, q, 12, sigma / c), orders)
    for a, m, t in zip(orders, mog, trunc):
        closed = sampled_gaussian_renyi(q, c / sigma, int(a))
        assert abs(mixture_renyi(sigma, (0.0, c), (1.0 - q, q), a) - closed) <= closed * mp.mpf(10) ** -14
        without, with_ = truncated_pair(5, q, 5, 0)
        assert abs(mixtures_renyi(without, with_, sigma / c, a) - closed) <= closed * mp.mpf(10) ** -14
        for ours in (m, t):
            assert closed <= mp.mpf(float(ours)) <= closed * (1 + mp.mpf(10) ** -9), (a, ours, closed)


@pytest.mark.slow
@_settings(6)
@given(n=st.integers(2, 6), q=st.floats(0.05, 0.95), cut=st.integers(1, 6), log_sigma=st.floats(-0.3, 0.5),
       other=st.sampled_from([0, -1]))
@example(n=6, q=0.9, cut=1, log_sigma=0.0, other=-1)  # within 0.03 % at order 2
@example(n=5, q=0.8, cut=1, log_sigma=math.log10(2.0), other=-1)  # within 0.1 % at order 2
def test_truncated_sampling_never_below_the_exact_divergence(n, q, cut, log_sigma, other):
    """A Gaussian on a truncated Poisson sample, for the pair where the record contributes 1 and
    each other record ``other`` (−1: a record displacing another moves the sum by 2): the exact
    Rényi divergences of the two output mixtures (mpmath quadrature, both orders) are at most the
    certified curve (one neighbouring pair: a necessary check, not the worst case)."""
    sigma = 10.0**log_sigma
    without, with_ = truncated_pair(n, q, min(cut, n), other)
    leaf = TruncatedSubsampledGaussianEvent(n, q, min(cut, n), sigma)
    for a, c in zip(ORDERS3, certified_curve(leaf, ORDERS3)):
        assert mp.mpf(float(c)) >= mixtures_renyi(without, with_, sigma, a), (a, c)


@_settings(25)
@given(n=st.integers(2, 10**6), log_q=st.floats(-6.0, 0.0), frac=st.floats(0.0, 1.0))
def test_truncation_weights_bound_the_exact_ones(n, log_q, frac):
    """The weights of the two parts and the cut part's sampling probability are never below the
    exact t = P(Binomial(n − 1, q) ≥ B), 1 − t and q̄ = B·P(Binomial(n, q) ≥ B + 1)/(n t)
    (mpmath), and within 1e-8 of them where t is not tiny."""
    from dpaudit.accounting.mixtures import mixture_parts

    q = 10.0**log_q
    b = max(1, min(n - 1, int(frac * n * min(1.0, 4 * q))))
    (w0, uncut), (w1, cut) = mixture_parts(TruncatedSubsampledGaussianEvent(n, q, b, 1.0))
    with mp.workdps(40):
        t, s = binomial_tail(n - 1, q, b), binomial_tail(n, q, b + 1)
        assert mp.mpf(w1) >= t and mp.mpf(w0) >= 1 - t
        assert uncut.sampling_probability == q and cut.event.sensitivity == 2.0
        if t > 1e-200:
            qbar = b * s / (n * t)
            assert mp.mpf(cut.sampling_probability) >= qbar
            assert mp.mpf(cut.sampling_probability) <= qbar * (1 + mp.mpf(10) ** -8) + mp.mpf(10) ** -290
            assert mp.mpf(w1) <= t * (1 + mp.mpf(10) ** -8) + mp.mpf(10) ** -290


@pytest.mark.parametrize("event", [
    MixtureOfGaussiansEvent(5e-324, (0.0, 1.0), (1.0 - 1e-16, 1e-16)),
    MixtureOfGaussiansEvent(1e300, (1e-300, 0.0), (0.5, 0.5)),
    MixtureOfGaussiansEvent(1.0, tuple(float(c) for c in np.linspace(0.0, 3.0, 100)), (0.01,) * 100),
    TruncatedSubsampledGaussianEvent(10**6, 0.5, 1, 5e-324),
    TruncatedSubsampledGaussianEvent(2**60, 0.5, 2**59, 1.0),
    TruncatedSubsampledGaussianEvent(10**7, 5e-324, 1, 1e300),
], ids=["tiny-sigma", "tiny-mu", "100-sensitivities", "tiny-noise", "n-above-2^53", "tiny-q"])
def test_mixture_events_answer_extreme_inputs(event):
    """Every extreme input gets a finite certified value or "not applicable" with a reason, never a
    numerical failure (a noise multiplier below 1e-150 used to make the subsampled Gaussian's
    series divide by σ² = 0: it now takes the Gaussian cap, valid everywhere)."""
    from dpaudit.accounting import account

    for kw in ({"delta": 1e-6}, {"epsilon": 1.0}):
        b = account(event.repeat(1000), **kw).bounds["rdp"]
        assert (b.applicable and math.isfinite(b.value) and b.value >= 0) or \
            (not b.applicable and "numerical failure" not in b.reason), (kw, b)
