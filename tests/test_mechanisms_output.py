"""Tests for the output mechanisms: Laplace, Gaussian, randomised response, report-noisy-max
(Laplace and heterogeneous Gaussian) and the exponential mechanism.

Statistical tests use fixed seeds (so they are deterministic) and the level 1e-3; each
sampler test is paired with a check that the same test rejects a wrong distribution.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import log_ndtr

from dpaudit.events import (
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
    PureDpEvent,
    RandomizedResponseEvent,
)
from dpaudit.ledger import Ledger
from mechanisms.base import Norm, check_batch, check_rng, record_release
from mechanisms.exponential import ExponentialMechanism
from mechanisms.gaussian import GaussianMechanism
from mechanisms.laplace import LaplaceMechanism
from mechanisms.randomized_response import RandomizedResponse
from mechanisms.report_noisy_max import (
    GaussianReportNoisyMax,
    LaplaceReportNoisyMax,
    gaussian_rnm_log_output_distribution,
    laplace_difference_logcdf,
    laplace_rnm_log_output_distribution,
    laplace_rnm_worst_case_loss,
)

LEVEL = 1e-3


def chi2_pvalue(samples: np.ndarray, probs: np.ndarray) -> float:
    counts = np.bincount(samples.reshape(-1), minlength=probs.size)
    expected = probs * samples.size
    return float(stats.chisquare(counts, expected).pvalue)


def gdp_delta(mu: float, eps: float) -> float:
    """δ(ε) of μ-GDP (Dong, Roth & Su Cor. 2.13), local copy so tests do not depend on conversions."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


ALL_MECHS = [
    (LaplaceMechanism(scale=2.0), 1.0),
    (GaussianMechanism(sigma=1.5), 1.0),
    (RandomizedResponse(epsilon=1.0, num_categories=3), 2),
    (LaplaceReportNoisyMax(scale=1.0, num_candidates=3), [1.0, 2.0, 0.0]),
    (GaussianReportNoisyMax(sigmas=(1.0, 2.0, 0.5)), [1.0, 2.0, 0.0]),
    (ExponentialMechanism(epsilon=1.0, num_candidates=3), [1.0, 2.0, 0.0]),
]


# ---------------------------------------------------------------------------------------
# base: rng, batch, ledger


@pytest.mark.parametrize("bad", [0, None, 1.5, np.random.RandomState(0), np.random])
def test_check_rng_rejects_non_generators(bad):
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        check_rng(bad)


@pytest.mark.parametrize("mech,x", ALL_MECHS)
def test_every_sampler_rejects_non_generators_and_is_reproducible(mech, x):
    with pytest.raises(ValueError, match="rng must be"):
        mech.sample(x, 123, size=3)
    with pytest.raises(ValueError, match="rng must be"):
        mech.release(x, None)
    a = mech.sample(x, np.random.default_rng(5), size=(4, 3))
    b = mech.sample(x, np.random.default_rng(5), size=(4, 3))
    assert a.shape[:2] == (4, 3)
    np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(a))


def test_check_batch():
    assert check_batch(None) == ()
    assert check_batch(7) == (7,)
    assert check_batch((2, 3)) == (2, 3)
    for bad in (-1, 2.5, True, (2, -1), "x"):
        with pytest.raises(ValueError, match="size"):
            check_batch(bad)


@pytest.mark.parametrize("mech,x", ALL_MECHS)
def test_release_records_exactly_its_event(mech, x):
    ledger = Ledger()
    mech.sample(x, np.random.default_rng(0), size=10)
    assert len(ledger) == 0
    out = mech.release(x, np.random.default_rng(0), ledger, units=[3, 4], label="lbl", round=7, arm=1)
    assert np.shape(out) == np.shape(mech.sample(x, np.random.default_rng(0)))
    (entry,) = ledger.entries
    assert entry.event == mech.event
    assert (entry.label, entry.round, entry.arm, entry.units) == ("lbl", 7, 1, frozenset({3, 4}))
    assert ledger.charges() == {3: 1, 4: 1}
    assert mech.release(x, np.random.default_rng(1)) is not None  # ledger=None records nowhere
    assert len(ledger) == 1


def test_failed_release_spends_nothing():
    ledger = Ledger()
    with pytest.raises(ValueError, match="shape"):
        rnm3 = LaplaceReportNoisyMax(scale=1.0, num_candidates=3)
        rnm3.release([1.0, 2.0], np.random.default_rng(0), ledger)
    with pytest.raises(ValueError, match="integers"):
        RandomizedResponse(epsilon=1.0).release(2, np.random.default_rng(0), ledger)
    assert len(ledger) == 0
    with pytest.raises(ValueError, match="ledger"):
        record_release([], LaplaceEvent(scale=1.0))


def test_events_are_the_documented_ones():
    assert LaplaceMechanism(scale=2.0, sensitivity=3.0).event == LaplaceEvent(scale=2.0, sensitivity=3.0)
    # ℓ2 / ℓ∞ sensitivity over d = 4 coordinates → ℓ1 bounds 2Δ and 4Δ
    assert LaplaceMechanism(scale=1.0, norm="l2", dim=4).event.sensitivity == pytest.approx(2.0)
    assert LaplaceMechanism(scale=1.0, norm="linf", dim=4).event.sensitivity == pytest.approx(4.0)
    assert LaplaceMechanism.from_epsilon(0.5, norm="linf", dim=4).epsilon == pytest.approx(0.5)
    assert GaussianMechanism(sigma=2.0, norm="linf", dim=9).event == GaussianEvent(sigma=2.0, sensitivity=3.0)
    assert GaussianMechanism.from_mu(0.5).event.mu == pytest.approx(0.5)
    assert GaussianMechanism(sigma=2.0, norm="l1", dim=9).mu == pytest.approx(0.5)
    assert RandomizedResponse(epsilon=0.7, num_categories=4).event == RandomizedResponseEvent(0.7, 4)
    rnm = LaplaceReportNoisyMax(scale=0.5, num_candidates=3, neighbouring="add-remove", monotone=True)
    assert rnm.event == LaplaceReportNoisyMaxEvent(0.5, 3, 1.0, Neighbouring.ADD_REMOVE, True)
    assert rnm.epsilon == pytest.approx(2.0)
    assert LaplaceReportNoisyMax(scale=0.5, num_candidates=3).epsilon == pytest.approx(4.0)
    g = GaussianReportNoisyMax(sigmas=(1.0, 4.0), sensitivities=(0.5, 1.0))
    assert g.event == GaussianReportNoisyMaxEvent((0.5, 1.0), (1.0, 4.0))
    assert g.mu == pytest.approx(0.5)
    em = ExponentialMechanism(epsilon=1.0, num_candidates=2, sensitivity=2.0)
    assert em.event == PureDpEvent(1.0) and em.beta == pytest.approx(0.25)  # ε = 2βΔ
    em_m = ExponentialMechanism(1.0, 2, 2.0, neighbouring="add-remove", monotone=True)
    assert em_m.beta == pytest.approx(0.5)  # ε = βΔ


@pytest.mark.parametrize(
    "factory,match",
    [
        (lambda: LaplaceMechanism(scale=0.0), r"scale must be in \(0, inf\)"),
        (lambda: LaplaceMechanism(scale=1.0, sensitivity=-1), "sensitivity must be in"),
        (lambda: LaplaceMechanism(scale=1.0, norm="l3"), "norm must be one of"),
        (lambda: LaplaceMechanism(scale=1.0, dim=0), "dim must be an integer >= 1"),
        (lambda: LaplaceMechanism(scale=1.0, neighbouring="swap"), "neighbouring must be one of"),
        (lambda: LaplaceMechanism.from_epsilon(float("nan")), "epsilon must be a number"),
        (lambda: GaussianMechanism(sigma=float("inf")), r"sigma must be in \(0, inf\)"),
        (lambda: GaussianMechanism.from_mu(0.0), "mu must be in"),
        (lambda: RandomizedResponse(epsilon=0.0), "epsilon must be in"),
        (lambda: RandomizedResponse(epsilon=1.0, num_categories=1), "num_categories must be an integer >= 2"),
        (lambda: RandomizedResponse(epsilon=1.0, neighbouring="add-remove"), "neighbouring must be 're"),
        (lambda: LaplaceReportNoisyMax(scale=1.0, num_candidates=1), "num_candidates must be an int"),
        (lambda: LaplaceReportNoisyMax(scale=1.0, num_candidates=2, monotone="yes"), "monotone must be"),
        (lambda: GaussianReportNoisyMax(sigmas=(1.0,)), "sigmas must be a vector with at least 2"),
        (lambda: GaussianReportNoisyMax(sigmas=(1.0, -2.0)), r"sigmas\[1\] must be in"),
        (lambda: GaussianReportNoisyMax(sigmas=(1.0, 2.0), sensitivities=(1, 2, 3)), "sensitivities must"),
        (lambda: ExponentialMechanism(epsilon=-1.0, num_candidates=2), "epsilon must be in"),
        (lambda: laplace_rnm_worst_case_loss(1.0, 0), "epoch_length must be an integer >= 1"),
    ],
)
def test_invalid_configs_raise_naming_the_parameter(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_configs_are_frozen():
    m = LaplaceMechanism(scale=1.0)
    with pytest.raises(AttributeError):
        m.scale = 2.0  # type: ignore[misc]
    assert hash(m) == hash(LaplaceMechanism(scale=1.0))


# ---------------------------------------------------------------------------------------
# samplers draw what they claim


def test_laplace_sampler_ks():
    mech = LaplaceMechanism(scale=2.5)
    y = mech.sample(3.0, np.random.default_rng(11), size=200_000)
    assert stats.kstest(y, stats.laplace(loc=3.0, scale=2.5).cdf).pvalue > LEVEL
    assert stats.kstest(y, stats.laplace(loc=3.0, scale=2.7).cdf).pvalue < LEVEL  # power check
    y2 = LaplaceMechanism(scale=1.0, dim=3).sample([0.0, 1.0, 2.0], np.random.default_rng(12), size=50_000)
    assert y2.shape == (50_000, 3)
    assert stats.kstest(y2[:, 2], stats.laplace(loc=2.0).cdf).pvalue > LEVEL


def test_gaussian_sampler_ks():
    y = GaussianMechanism(sigma=0.7).sample(-1.0, np.random.default_rng(13), size=200_000)
    assert stats.kstest(y, stats.norm(loc=-1.0, scale=0.7).cdf).pvalue > LEVEL
    assert stats.kstest(y, stats.norm(loc=-0.98, scale=0.7).cdf).pvalue < LEVEL


@pytest.mark.parametrize("k,x", [(2, 1), (2, 0), (5, 3)])
def test_randomized_response_sampler_chi2(k, x):
    rr = RandomizedResponse(epsilon=0.8, num_categories=k)
    y = rr.sample(x, np.random.default_rng(14 + k + x), size=200_000)
    p = rr.output_distribution(x)
    assert p.sum() == pytest.approx(1.0, abs=1e-14)
    assert p[x] == pytest.approx(math.exp(0.8) / (math.exp(0.8) + k - 1), rel=1e-14)
    assert chi2_pvalue(y, p) > LEVEL
    assert chi2_pvalue(y, RandomizedResponse(epsilon=0.85, num_categories=k).output_distribution(x)) < LEVEL


def test_randomized_response_vectorised_over_values():
    rr = RandomizedResponse(epsilon=1.0, num_categories=4)
    x = np.array([0, 1, 2, 3, 3])
    y = rr.sample(x, np.random.default_rng(15), size=100_000)
    assert y.shape == (100_000, 5) and y.dtype == np.int64
    for col in (0, 3):
        assert chi2_pvalue(y[:, col], rr.output_distribution(int(x[col]))) > LEVEL


SCORES = np.array([3.0, 2.0, 2.5, 0.0])


def test_laplace_rnm_sampler_matches_exact_distribution():
    rnm = LaplaceReportNoisyMax(scale=1.3, num_candidates=4)
    y = rnm.sample(SCORES, np.random.default_rng(16), size=400_000)
    p = rnm.output_distribution(SCORES)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert chi2_pvalue(y, p) > LEVEL
    wrong = GaussianReportNoisyMax(sigmas=(1.3 * math.sqrt(2),) * 4).output_distribution(SCORES)
    assert chi2_pvalue(y, wrong) < LEVEL


def test_gaussian_rnm_sampler_matches_exact_distribution():
    sig = (1.0, 2.0, 0.5, 3.0)
    rnm = GaussianReportNoisyMax(sigmas=sig)
    y = rnm.sample(SCORES, np.random.default_rng(17), size=400_000)
    p = rnm.output_distribution(SCORES)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert chi2_pvalue(y, p) > LEVEL
    wrong = GaussianReportNoisyMax(sigmas=(1.0, 2.0, 0.5, 2.8)).output_distribution(SCORES)
    assert chi2_pvalue(y, wrong) < LEVEL


def test_exponential_sampler_matches_exact_distribution():
    em = ExponentialMechanism(epsilon=1.5, num_candidates=4)
    y = em.sample(SCORES, np.random.default_rng(18), size=400_000)
    p = em.output_distribution(SCORES)
    np.testing.assert_allclose(p, np.exp(0.75 * SCORES) / np.exp(0.75 * SCORES).sum(), rtol=1e-14)
    assert chi2_pvalue(y, p) > LEVEL
    wrong = ExponentialMechanism(epsilon=1.6, num_candidates=4).output_distribution(SCORES)
    assert chi2_pvalue(y, wrong) < LEVEL


# ---------------------------------------------------------------------------------------
# exact output distributions: accuracy


def test_laplace_difference_cdf_closed_form():
    b = 0.7
    z = np.array([-3.0, -0.2, 0.0, 0.4, 5.0])
    dens = lambda t: math.exp(-abs(t) / b) * (1 + abs(t) / b) / (4 * b)  # noqa: E731
    ref = [integrate.quad(dens, -np.inf, min(zz, 0.0), epsabs=1e-15)[0]
           + (integrate.quad(dens, 0.0, zz, epsabs=1e-15)[0] if zz > 0 else 0.0) for zz in z]
    np.testing.assert_allclose(np.exp(laplace_difference_logcdf(z, b)), ref, rtol=1e-10)
    far = laplace_difference_logcdf(np.array([-1e4, 1e4]), 1.0)
    assert np.all(np.isfinite(far)) and far[0] < -9990 and far[1] == 0.0


def test_laplace_rnm_quadrature_agrees_with_closed_form_and_symmetry():
    from mechanisms.report_noisy_max import _laplace_rnm_logp_quadrature

    for s, b in [([3.0, 2.0], 1.0), ([0.0, 7.5], 0.3), ([1.0, 1.0], 2.0)]:
        exact = laplace_rnm_log_output_distribution(s, b)
        quad = _laplace_rnm_logp_quadrature(np.array(s), b)
        np.testing.assert_allclose(quad, exact, rtol=1e-11, atol=1e-12)
    tie = laplace_rnm_log_output_distribution([2.0, 2.0, 2.0], 1.0)
    np.testing.assert_allclose(tie, np.log(1 / 3), atol=1e-12)
    # a large gap: tiny but finite log-probabilities, probabilities still sum to one
    lp = laplace_rnm_log_output_distribution([0.0, 100.0, 40.0], 1.0)
    assert np.all(np.isfinite(lp)) and lp[0] < -90
    assert math.fsum(np.exp(lp)) == pytest.approx(1.0, abs=1e-12)


def test_laplace_rnm_three_candidates_against_direct_quadrature():
    s, b = np.array([0.3, -0.4, 1.1]), 0.8

    def direct(i: int) -> float:
        def integrand(x):
            val = math.exp(-abs(x - s[i]) / b) / (2 * b)
            for j in range(3):
                if j != i:
                    y = x - s[j]
                    val *= 0.5 * math.exp(y / b) if y < 0 else 1 - 0.5 * math.exp(-y / b)
            return val

        return integrate.quad(integrand, -60, 60, points=sorted(s), epsabs=1e-15, epsrel=1e-13, limit=400)[0]

    got = np.exp(laplace_rnm_log_output_distribution(s, b))
    np.testing.assert_allclose(got, [direct(i) for i in range(3)], rtol=1e-10)


@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e-6, 1e-3, 1.0, 1e6, 1e12])
def test_laplace_rnm_quadrature_at_extreme_scales(scale):
    """Three arms, the third 80 scales below the others, against the two-arm closed form: at scale
    1e-6 the quadrature once lost half of the probability (0.5 instead of 1 for counts (16, 0)),
    and integrated in x rather than in units of the scale it was only 1.4e-8 accurate at 1e-9
    (the test's tolerance there was 5e-8)."""
    rtol = 1e-13
    import warnings

    for g in (0.0, 0.5, 1.0, 3.0, 16.0):
        three = np.array([g, 0.0, min(g, 0.0) - 80 * scale])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and no warning reaches the user
            got = np.exp(laplace_rnm_log_output_distribution(three, scale))
        two = np.exp(laplace_rnm_log_output_distribution(three[:2], scale))
        np.testing.assert_allclose(got[:2], two, rtol=rtol)
        assert abs(got.sum() - 1.0) <= rtol


def test_laplace_rnm_at_the_ends_of_the_float_range():
    """Scores 10³⁰⁰ scales apart still give a distribution (the cut point of a piece once took a
    tolerance relative to the piece's width, 10²⁸⁶ here, and ended in a math domain error); scores
    more scales apart than a double holds are refused by name, before any work, with no warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scores, scale in (([0.0, 1.0, 2.0], 1e-300), ([0.0, 1e300, 2e300], 1.0)):
            p = np.exp(laplace_rnm_log_output_distribution(scores, scale))
            assert p[2] == pytest.approx(1.0, abs=1e-12) and p[0] == p[1] == 0.0
        for scores, scale in (([0.0, 1.0, 2.0], 5e-324), ([-1e308, 0.0, 1e308], 1.0)):
            with pytest.raises(ValueError, match=r"^scale=\S+ is too small .* up to inf scales apart"):
                laplace_rnm_log_output_distribution(scores, scale)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e-100, 1e-10, 1e10, 1e100, 1e300])
def test_laplace_rnm_is_the_same_law_at_every_scale(scale):
    """Scores s·b at scale b are scores s at scale 1 (the noise scales with b): the same
    distribution to 1e-14 wherever b lies in the float range, normalised to rounding, no
    probability above 1. (The density term once took log b and log 2b apart: at b = 1e-300 the
    two logarithms of ~690 cancelled and put the winner's probability 2.8e-14 above 1.)"""
    for scores in ([0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.3, 0.7, 1.1], [2.0, -1.0, 0.5, 0.5, 40.0]):
        ref = laplace_rnm_log_output_distribution(scores, 1.0)
        got = laplace_rnm_log_output_distribution([x * scale for x in scores], scale)
        np.testing.assert_allclose(got, ref, rtol=0.0, atol=1e-14)
        assert abs(math.fsum(np.exp(got))) - 1.0 <= 4e-16 and np.all(got <= 4e-16)


def test_gaussian_rnm_exact_for_two_candidates_including_tails():
    for f, sg in [([0.0, 1.0], [1.0, 2.0]), ([0.0, 30.0], [1.0, 2.0]), ([0.0, 1.0], [100.0, 0.01])]:
        gap = (f[0] - f[1]) / math.hypot(*sg)
        ref = np.array([log_ndtr(gap), log_ndtr(-gap)])
        got = gaussian_rnm_log_output_distribution(f, sg)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-13)
    # P(argmax = 0) ~ e^{-93.5}: log-space keeps it finite and accurate
    tail = gaussian_rnm_log_output_distribution([0.0, 30.0], [1.0, 2.0])[0]
    assert tail == pytest.approx(-93.52089738848115, rel=1e-12)


def test_gaussian_rnm_against_direct_quadrature():
    f, sg = np.array([0.5, -1.0, 0.0]), np.array([1.0, 0.3, 2.0])

    def direct(i: int) -> float:
        def integrand(x):
            val = stats.norm.pdf(x, f[i], sg[i])
            for j in range(3):
                if j != i:
                    val *= stats.norm.cdf((x - f[j]) / sg[j])
            return val

        return integrate.quad(integrand, -40, 40, epsabs=1e-15, epsrel=1e-13, limit=400)[0]

    got = np.exp(gaussian_rnm_log_output_distribution(f, sg))
    np.testing.assert_allclose(got, [direct(i) for i in range(3)], rtol=1e-10)


# ---------------------------------------------------------------------------------------
# privacy loss


def test_laplace_loss_bounded_and_attains_epsilon_outside_the_means():
    mech = LaplaceMechanism.from_epsilon(0.8)
    o = np.linspace(-10, 10, 2001)
    loss = mech.privacy_loss(o, 1.0, 0.0)
    assert loss.shape == o.shape
    assert np.all(np.abs(loss) <= 0.8 + 1e-12)
    np.testing.assert_allclose(loss[o >= 1.0], 0.8, rtol=1e-12)
    np.testing.assert_allclose(loss[o <= 0.0], -0.8, rtol=1e-12)
    inside = (o > 0.0) & (o < 1.0)
    assert np.all(np.abs(loss[inside]) < 0.8)
    np.testing.assert_allclose(loss, mech.log_density(o, 1.0) - mech.log_density(o, 0.0), atol=1e-12)
    with pytest.raises(ValueError, match="not neighbours"):
        mech.privacy_loss(o, 2.0, 0.0)


def test_laplace_loss_vector_l2_norm():
    mech = LaplaceMechanism(scale=1.0, norm="l2", dim=2)  # ℓ1 bound √2, ε = √2
    x, xp = np.array([0.0, 0.0]), np.array([math.sqrt(0.5), math.sqrt(0.5)])
    o = mech.sample(x, np.random.default_rng(19), size=10_000)
    loss = mech.privacy_loss(o, x, xp)
    assert loss.shape == (10_000,)
    assert np.max(np.abs(loss)) <= mech.epsilon + 1e-12
    assert mech.privacy_loss(np.array([-5.0, -5.0]), x, xp) == pytest.approx(math.sqrt(2))


def test_gaussian_loss_distribution_is_normal():
    mech = GaussianMechanism(sigma=0.5)
    m = 1.0 / 0.5
    o = mech.sample(1.0, np.random.default_rng(20), size=100_000)
    loss = mech.privacy_loss(o, 1.0, 0.0)
    assert stats.kstest(loss, stats.norm(loc=m * m / 2, scale=m).cdf).pvalue > LEVEL
    np.testing.assert_allclose(loss, mech.log_density(o, 1.0) - mech.log_density(o, 0.0), atol=1e-9)
    with pytest.raises(ValueError, match="not neighbours"):
        mech.privacy_loss(o, 1.5, 0.0)


def test_randomized_response_loss_attains_epsilon():
    rr = RandomizedResponse(epsilon=0.9, num_categories=4)
    loss = rr.privacy_loss(np.arange(4), 1, 2)
    np.testing.assert_allclose(loss, [0.0, 0.9, -0.9, 0.0], atol=1e-14)


def test_exponential_loss_bounded_and_approaches_epsilon():
    rng = np.random.default_rng(21)
    em = ExponentialMechanism(epsilon=1.0, num_candidates=5)
    for _ in range(200):
        u = rng.normal(size=5)
        up = u + rng.uniform(-1, 1, size=5)
        assert np.max(np.abs(em.privacy_loss(np.arange(5), u, up))) <= 1.0 + 1e-12
    big = ExponentialMechanism(epsilon=1.0, num_candidates=10_000)
    u = np.zeros(10_000)
    up = np.ones(10_000)
    up[0] = -1.0
    loss0 = float(big.privacy_loss(np.array([0]), u, up)[0])
    assert 0.99 < loss0 <= 1.0
    mono = ExponentialMechanism(1.0, 5, neighbouring="add-remove", monotone=True)
    for _ in range(200):
        u = rng.normal(size=5)
        up = u + rng.uniform(0, 1, size=5)
        assert np.max(np.abs(mono.privacy_loss(np.arange(5), u, up))) <= 1.0 + 1e-12
    with pytest.raises(ValueError, match="both signs"):
        mono.privacy_loss(np.arange(5), u, u + np.array([1, -1, 0, 0, 0.0]))


def test_laplace_rnm_loss_monotone_add_remove_at_most_eps_but_replace_exceeds():
    rng = np.random.default_rng(22)
    mono = LaplaceReportNoisyMax(scale=1.0, num_candidates=4, neighbouring="add-remove", monotone=True)
    worst = 0.0
    for _ in range(30):
        x = rng.integers(0, 6, size=4).astype(float)
        xp = x + rng.integers(0, 2, size=4)
        worst = max(worst, float(np.max(np.abs(mono.privacy_loss(np.arange(4), x, xp)))))
    assert 0.3 < worst <= mono.epsilon + 1e-10
    rep = LaplaceReportNoisyMax(scale=1.0, num_candidates=2)
    loss = rep.privacy_loss(np.array([0, 1]), [1.0, 1.0], [0.0, 2.0])  # g: 0 → −2 (n = 2 epoch)
    assert loss[0] == pytest.approx(laplace_rnm_worst_case_loss(1.0, 2), abs=1e-12)
    assert 1.0 < loss[0] <= rep.epsilon
    with pytest.raises(ValueError, match="sensitivity"):
        rep.privacy_loss(np.array([0]), [2.0, 0.0], [0.0, 2.0])


def test_gaussian_rnm_hockey_stick_within_gdp_bound():
    rnm = GaussianReportNoisyMax(sigmas=(1.0, 0.5, 2.0), sensitivities=1.0)
    x = np.array([0.2, 0.0, -0.3])
    for i in range(3):
        xp = x.copy()
        xp[i] += 0.5  # change of one score by 0.5 ≤ s_i
        for a, b in ((x, xp), (xp, x)):
            p, q = rnm.output_distribution(a), rnm.output_distribution(b)
            for eps in (0.0, 0.5, 1.0):
                hs = float(np.maximum(p - math.exp(eps) * q, 0).sum())
                assert hs <= gdp_delta(rnm.mu, eps) + 1e-12
    with pytest.raises(ValueError, match="at most one"):
        rnm.privacy_loss(np.array([0]), x, x + 0.1)
    loss = rnm.privacy_loss(np.array([0, 1, 2, 0]), x, x + np.array([0.0, 1.0, 0.0]))
    assert loss.shape == (4,) and loss[1] < 0 < loss[0]


# ---------------------------------------------------------------------------------------
# Hu et al. (2024), Theorem 8 under replace: exact worst-case loss of Laplace RNM under replace, K = 2

TABLE = [
    (1.0, 1, 0.965), (1.0, 2, 1.307), (1.0, 4, 1.595), (1.0, 16, 1.882), (1.0, 64, 1.969), (1.0, 1024, 1.998),
    (0.25, 1, 0.249), (0.25, 2, 0.277), (0.25, 4, 0.318), (0.25, 16, 0.413), (0.25, 64, 0.472),
]


@pytest.mark.parametrize("eps,n,expected", TABLE)
def test_laplace_rnm_replace_table(eps, n, expected):
    assert round(laplace_rnm_worst_case_loss(eps, n, neighbouring="replace"), 3) == expected


def test_laplace_rnm_replace_limit_and_add_remove_bound():
    assert round(laplace_rnm_worst_case_loss(0.25, 16384), 4) == 0.4999
    rep = [laplace_rnm_worst_case_loss(1.0, n) for n in (1, 2, 4, 16, 64, 1024)]
    assert all(a < b for a, b in zip(rep, rep[1:])) and rep[-1] < 2.0
    for eps in (1.0, 0.25):
        ar = [laplace_rnm_worst_case_loss(eps, n, neighbouring="add-remove") for n in (1, 2, 16, 1024, 16384)]
        assert all(a < b for a, b in zip(ar, ar[1:]))
        assert ar[-1] <= eps and ar[-1] > 0.99 * eps


@pytest.mark.parametrize("n", [1, 2, 3])
def test_laplace_rnm_worst_case_equals_brute_force_over_reward_vectors(n):
    """Enumerate every epoch count vector and every replaced / added reward vector in {0,1}²."""
    eps = 1.0
    rep = LaplaceReportNoisyMax(scale=1 / eps, num_candidates=2)
    add = LaplaceReportNoisyMax(scale=1 / eps, num_candidates=2, neighbouring="add-remove", monotone=True)
    vecs = [np.array(v, dtype=float) for v in ((0, 0), (0, 1), (1, 0), (1, 1))]
    worst_rep = worst_add = 0.0
    outs = np.array([0, 1])
    for c0 in range(n + 1):
        for c1 in range(n + 1):
            phi = np.array([c0, c1], dtype=float)
            for x in vecs:  # the replaced round's vector must be part of phi
                if np.all(x <= phi) and np.all(phi - x <= n - 1):
                    for xn in vecs:
                        loss = rep.privacy_loss(outs, phi, phi - x + xn)
                        worst_rep = max(worst_rep, float(np.max(np.abs(loss))))
            if max(c0, c1) <= n - 1:  # n − 1 rounds, plus one added round → epoch of n rounds
                for xn in vecs:
                    worst_add = max(worst_add, float(np.max(np.abs(add.privacy_loss(outs, phi, phi + xn)))))
    assert worst_rep == pytest.approx(laplace_rnm_worst_case_loss(eps, n), abs=1e-12)
    expected_add = laplace_rnm_worst_case_loss(eps, n, neighbouring="add-remove")
    assert worst_add == pytest.approx(expected_add, abs=1e-12)
    assert worst_add < eps < worst_rep or n == 1


def test_norm_enum_values():
    assert [n.value for n in Norm] == ["l1", "l2", "linf"]


def test_laplace_rnm_equal_scores_share_one_integral_and_the_cache_is_not_shared():
    """Arms with equal scores are exchangeable: computing one integral per distinct score (what
    makes 1000 arms feasible) must agree with integrating every arm; the memoised result is
    returned as a copy."""
    s, b = np.array([3.0, 0.0, 0.0, 1.0, 0.0, 1.0]), 0.7

    def direct(i: int) -> float:  # every arm integrated on its own
        def integrand(x):
            val = math.exp(-abs(x - s[i]) / b) / (2 * b)
            for j in range(s.size):
                if j != i:
                    y = x - s[j]
                    val *= 0.5 * math.exp(y / b) if y < 0 else 1 - 0.5 * math.exp(-y / b)
            return val

        pts = sorted(set(s.tolist()))
        return integrate.quad(integrand, -60, 60, points=pts, epsabs=1e-15, epsrel=1e-13, limit=400)[0]

    got = laplace_rnm_log_output_distribution(s, b)
    np.testing.assert_allclose(np.exp(got), [direct(i) for i in range(s.size)], rtol=1e-10)
    assert math.fsum(np.exp(got)) == pytest.approx(1.0, abs=1e-12)
    got[:] = 0.0  # the caller's copy: the next call is unaffected
    again = laplace_rnm_log_output_distribution(s, b)
    assert again[0] < 0 and again[1] == again[2] == again[4] and again[3] == again[5]


def test_laplace_rnm_distribution_is_permutation_equivariant():
    s = np.array([0.3, -0.4, 1.1, 0.3])
    perm = np.array([2, 0, 3, 1])
    a = laplace_rnm_log_output_distribution(s, 0.8)
    b = laplace_rnm_log_output_distribution(s[perm], 0.8)
    np.testing.assert_array_equal(a[perm], b)  # one quadrature of the sorted scores serves both
