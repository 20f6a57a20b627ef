"""The PLD of the mixture leaves (mixtures of Gaussians, Gaussians on truncated Poisson samples):
never below the exact hockey-stick divergence of the mechanism, equal to the Poisson-subsampled
Gaussian's where the mixture is one (dp-accounting's PLD on the same events:
tests/test_interop.py::test_mixture_events_against_dp_accounting)."""

from __future__ import annotations

import mpmath as mp
import pytest

from dpaudit.accounting import delta_under, epsilon_under
from dpaudit.events import GaussianEvent, PoissonSampledEvent
from dpaudit.events_ml import MixtureOfGaussiansEvent, TruncatedSubsampledGaussianEvent
from tests.mixture_reference import mixture_delta, mixtures_delta, truncated_pair

EPSILONS = (0.0, 0.3, 1.0, 2.5)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "q", "cut", "sigma", "other"), [
    (5, 0.8, 1, 1.0, -1), (6, 0.9, 1, 1.0, -1), (4, 0.5, 2, 0.7, 0), (6, 0.3, 3, 2.0, -1)])
def test_truncated_pld_never_below_the_exact_divergence(n, q, cut, sigma, other):
    without, with_ = truncated_pair(n, q, cut, other)
    leaf = TruncatedSubsampledGaussianEvent(n, q, cut, sigma)
    for eps in EPSILONS:
        ours = delta_under("pld", leaf, eps)
        exact = mixtures_delta(without, with_, sigma, eps)
        assert mp.mpf(ours) >= exact * (1 - mp.mpf(10) ** -12), (eps, ours, exact)


@pytest.mark.parametrize(("sigma", "cs", "ps"), [
    (1.0, (0.0, 1.0, 2.0), (0.9, 0.08, 0.02)), (0.8, (0.0, 0.5, 1.0), (0.5, 0.3, 0.2)),
    (2.0, (1.0, 3.0), (0.7, 0.3))])
def test_mixture_pld_never_below_the_exact_divergence(sigma, cs, ps):
    leaf = MixtureOfGaussiansEvent(sigma, cs, ps)
    for eps in EPSILONS:
        ours = delta_under("pld", leaf, eps)
        exact = mixture_delta(ps, cs, sigma, eps)
        assert mp.mpf(ours) >= exact * (1 - mp.mpf(10) ** -12), (eps, ours, exact)


def test_a_two_point_mixture_is_the_sampled_gaussian_under_pld():
    mog = MixtureOfGaussiansEvent(1.0, (0.0, 1.0), (0.99, 0.01)).repeat(500)
    sg = PoissonSampledEvent(0.01, GaussianEvent(sigma=1.0)).repeat(500)
    ours, ref = epsilon_under("pld", mog, 1e-6), epsilon_under("pld", sg, 1e-6)
    # one part, q rounded up by an ulp; each PMF's rounding up (~1e-14 of its mass per step) moves
    # in either direction with q, so the two agree to that, not in order
    assert ours == pytest.approx(ref, rel=1e-9)
