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
from tests.mixture_reference import mixture_delta, truncated_pair

EPSILONS = (0.0, 0.3, 1.0, 2.5)


def _hockey_stick(p_parts, q_parts, sigma, eps):
    """max of the two hockey-stick divergences at ε of P = Σ w N(c, σ²) and Q likewise (weights
    normalised), by quadrature of the positive part split at every mean and every sign change
    found on a fine grid (40 digits)."""
    with mp.workdps(30):
        s, e = mp.mpf(sigma), mp.e ** mp.mpf(eps)
        tp, tq = mp.fsum(w for w, _ in p_parts), mp.fsum(w for w, _ in q_parts)

        def dens(parts, total):
            return lambda z: mp.fsum(mp.mpf(w) / total * mp.npdf(z, c, s) for w, c in parts if w > 0)

        p, q = dens(p_parts, tp), dens(q_parts, tq)
        means = sorted({mp.mpf(c) for _, c in p_parts + q_parts})
        lo, hi = means[0] - 40 * s, means[-1] + 40 * s
        out = []
        for a, b in ((p, q), (q, p)):
            f = lambda z, a=a, b=b: a(z) - e * b(z)  # noqa: E731
            grid = [lo + (hi - lo) * i / 400 for i in range(401)]
            cuts = [mp.findroot(f, (x, y), solver="anderson") for x, y in zip(grid, grid[1:])
                    if (f(x) > 0) != (f(y) > 0)]
            pts = sorted(set(means + cuts + [lo, hi]))
            out.append(mp.quad(lambda z, f=f: max(f(z), 0), pts))
        return max(out)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "q", "cut", "sigma", "other"), [
    (5, 0.8, 1, 1.0, -1), (6, 0.9, 1, 1.0, -1), (4, 0.5, 2, 0.7, 0), (6, 0.3, 3, 2.0, -1)])
def test_truncated_pld_never_below_the_exact_divergence(n, q, cut, sigma, other):
    without, with_ = truncated_pair(n, q, cut, other)
    leaf = TruncatedSubsampledGaussianEvent(n, q, cut, sigma)
    for eps in EPSILONS:
        ours = delta_under("pld", leaf, eps)
        exact = _hockey_stick(without, with_, sigma, eps)
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
