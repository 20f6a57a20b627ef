"""Tests of the audit statistics layer: validity (null → 0, coverage over seeds), power (planted
bugs detected), tightness, and properties of the Clopper–Pearson / rate → privacy maps."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpaudit.audit import (
    Bonferroni,
    Identity,
    Indicator,
    PrivacyLoss,
    Projection,
    SampleSplit,
    audit_privacy_profile,
    audit_tradeoff_curve,
    clopper_pearson_lower,
    clopper_pearson_upper,
    default_statistic,
    delta_from_rates,
    epsilon_from_rates,
    epsilon_lower_bound,
    epsilon_lower_bound_from_counts,
    epsilon_lower_bound_from_losses,
    gdp_tradeoff_curve,
    monte_carlo_profile,
    mu_from_rates,
    mu_lower_bound,
    mu_lower_bound_from_counts,
    threshold_grid,
    threshold_rates,
)

try:  # the shared, conservatively rounded conversions
    from dpaudit.conversions import gdp_delta
except ImportError:  # pragma: no cover - private fallback until conversions.py exists

    def gdp_delta(mu: float, epsilon: float) -> float:
        return float(
            stats.norm.cdf(-epsilon / mu + mu / 2)
            - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
        )


CONF = 0.95
SELECTIONS = [Bonferroni(), SampleSplit()]


def _json_roundtrip(obj: object) -> dict:
    return json.loads(json.dumps(dataclasses.asdict(obj)))


# ---------------------------------------------------------------------------------------
# Clopper–Pearson


def test_cp_exact_endpoints() -> None:
    n = 1000
    assert clopper_pearson_upper(n, n, confidence=CONF) == 1.0
    assert clopper_pearson_lower(0, n, confidence=CONF) == 0.0
    assert clopper_pearson_upper(0, n, confidence=CONF) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, confidence=CONF) == pytest.approx(0.05 ** (1 / n), rel=1e-12)
    # interior agrees with the textbook beta quantiles
    assert clopper_pearson_upper(7, n, confidence=CONF) == pytest.approx(stats.beta.ppf(0.95, 8, n - 7))
    assert clopper_pearson_lower(7, n, confidence=CONF) == pytest.approx(stats.beta.ppf(0.05, 7, n - 6))


def test_cp_tiny_alpha_no_cancellation() -> None:
    # 1 - confidence = 1e-12 must not collapse to 0 or 1 through 1 - alpha rounding
    u = clopper_pearson_upper(0, 10**6, confidence=1 - 1e-12)
    assert u == pytest.approx(-math.expm1(math.log(1e-12) / 1e6), rel=1e-6)


def test_cp_coverage_simulation() -> None:
    rng = np.random.default_rng(0)
    p, n = 0.03, 200
    k = rng.binomial(n, p, size=20_000)
    up = clopper_pearson_upper(k, n, confidence=0.9)
    lo = clopper_pearson_lower(k, n, confidence=0.9)
    assert np.mean(up < p) <= 0.1
    assert np.mean(lo > p) <= 0.1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"successes": 5, "trials": 4, "confidence": 0.95}, "successes"),
        ({"successes": -1, "trials": 4, "confidence": 0.95}, "successes"),
        ({"successes": 1, "trials": 0, "confidence": 0.95}, "trials"),
        ({"successes": 1.5, "trials": 4, "confidence": 0.95}, "successes"),
        ({"successes": 1, "trials": 4, "confidence": 1.0}, "confidence"),
    ],
)
def test_cp_validation(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        clopper_pearson_upper(**kwargs)


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 10**6),
    frac=st.floats(0, 1),
    conf=st.floats(0.5, 0.999999),
)
def test_cp_brackets_mle_and_monotone(n: int, frac: float, conf: float) -> None:
    k = int(round(frac * n))
    lo = clopper_pearson_lower(k, n, confidence=conf)
    up = clopper_pearson_upper(k, n, confidence=conf)
    assert 0.0 <= lo <= k / n <= up <= 1.0
    if k < n:  # more successes → larger bounds
        assert clopper_pearson_upper(k + 1, n, confidence=conf) >= up
        assert clopper_pearson_lower(k + 1, n, confidence=conf) >= lo
    # more confidence → wider
    conf2 = 1 - (1 - conf) / 2
    assert clopper_pearson_upper(k, n, confidence=conf2) >= up
    assert clopper_pearson_lower(k, n, confidence=conf2) <= lo


# ---------------------------------------------------------------------------------------
# rates → privacy parameters


def test_rate_maps_basic() -> None:
    assert epsilon_from_rates(0.01, 0.5, 0.0) == pytest.approx(math.log(50))
    assert epsilon_from_rates(0.5, 0.01, 0.0) == pytest.approx(math.log(50))  # reflected term
    assert epsilon_from_rates(0.0, 0.5, 0.0) == math.inf
    assert epsilon_from_rates(0.0, 1.0, 0.0) == 0.0  # trivial test
    assert epsilon_from_rates(0.9, 0.9, 0.0) == 0.0  # worse than random: floored
    a = stats.norm.cdf(-0.5)
    assert mu_from_rates(a, a) == pytest.approx(1.0)
    assert mu_from_rates(0.0, 0.0) == math.inf
    assert mu_from_rates(1.0, 1.0) == 0.0
    assert mu_from_rates(0.0, 1.0) == 0.0
    assert delta_from_rates(0.0, 0.0, 1e6) == 1.0
    assert delta_from_rates(0.5, 0.5, 0.0) == 0.0
    with pytest.raises(ValueError, match="delta"):
        epsilon_from_rates(0.1, 0.1, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        mu_from_rates(1.5, 0.1)


def test_bounds_from_counts_match_privacy_estimates() -> None:
    # the value privacy_estimates.compute_eps_lo(method="beta") gives on these counts
    b = epsilon_lower_bound_from_counts(20, 5000, 300, 5000, delta=1e-5, confidence=0.95)
    assert b.epsilon == pytest.approx(5.0186, abs=1e-4)
    b = epsilon_lower_bound_from_counts(300, 5000, 1500, 5000, delta=1e-5, confidence=0.95)
    assert b.epsilon == pytest.approx(2.3286, abs=1e-4)
    assert _json_roundtrip(b)["evidence"]["false_positives"] == 300


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    n0=st.integers(1, 10**5),
    n1=st.integers(1, 10**5),
    a=st.floats(0, 1),
    b=st.floats(0, 1),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.1]),
)
def test_epsilon_bound_monotone_in_counts(n0: int, n1: int, a: float, b: float, delta: float) -> None:
    fp, fn = int(a * n0), int(b * n1)
    e = epsilon_lower_bound_from_counts(fp, n0, fn, n1, delta=delta, confidence=CONF).epsilon
    assert e >= 0
    if fp < n0:
        assert epsilon_lower_bound_from_counts(fp + 1, n0, fn, n1, delta=delta, confidence=CONF).epsilon <= e
    if fn < n1:
        assert epsilon_lower_bound_from_counts(fp, n0, fn + 1, n1, delta=delta, confidence=CONF).epsilon <= e
    # larger delta can only lower the bound
    assert epsilon_lower_bound_from_counts(fp, n0, fn, n1, delta=0.5, confidence=CONF).epsilon <= e
    m = mu_lower_bound_from_counts(fp, n0, fn, n1, confidence=CONF).mu
    assert m >= 0
    if fp < n0:
        assert mu_lower_bound_from_counts(fp + 1, n0, fn, n1, confidence=CONF).mu <= m


@settings(max_examples=200, deadline=None)
@given(p=st.floats(0, 1), q=st.floats(0, 1))
def test_mu_bound_nonnegative(p: float, q: float) -> None:
    assert mu_from_rates(p, q) >= 0
    assert epsilon_from_rates(p, q, 0.0) >= 0
    assert 0 <= delta_from_rates(p, q, 1.0) <= 1


# ---------------------------------------------------------------------------------------
# threshold grid and families


def test_threshold_grid_pre_registered() -> None:
    g = threshold_grid(10**6, 300)
    assert g.size == 300 and g[0] == 0 and g[-1] == 10**6 - 1
    assert np.all(np.diff(g) > 0)
    assert threshold_grid(1, 300).tolist() == [0]
    with pytest.raises(ValueError, match="size"):
        threshold_grid(10, 0)


def test_family_counts_match_bruteforce() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 1, 3000), rng.normal(0.5, 1, 2000)
    r = threshold_rates(x, y, confidence=CONF, selection=Bonferroni(grid_size=40))
    for t, o, fp, fn in zip(r.thresholds, r.orientations, r.false_positives, r.false_negatives):
        if o == 1:
            assert fp == np.count_nonzero(x > t) and fn == np.count_nonzero(y <= t)
        else:
            assert fp == np.count_nonzero(x < t) and fn == np.count_nonzero(y >= t)
    assert r.alpha_per_bound == pytest.approx(0.05 / (2 * r.tests))
    d = _json_roundtrip(r)
    assert len(d["fpr_upper"]) == r.tests


@pytest.mark.parametrize("selection", SELECTIONS, ids=["bonferroni", "split"])
def test_identical_inputs_give_zero(selection: Bonferroni | SampleSplit) -> None:
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x, y = rng.normal(0, 1, 20_000), rng.normal(0, 1, 20_000)
        assert mu_lower_bound(x, y, confidence=CONF, selection=selection).mu == 0.0
        for delta in (0.0, 1e-5):
            assert epsilon_lower_bound(x, y, delta=delta, confidence=CONF, selection=selection).epsilon == 0.0
        # discrete outputs with ties (the same distribution)
        a, b = rng.integers(0, 3, 20_000), rng.integers(0, 3, 20_000)
        assert mu_lower_bound(a, b, confidence=CONF, selection=selection).mu == 0.0
        # constant outputs
        z = np.zeros(1000)
        assert epsilon_lower_bound(z, z, delta=0.0, confidence=CONF, selection=selection).epsilon == 0.0


@pytest.mark.parametrize("selection", SELECTIONS, ids=["bonferroni", "split"])
def test_reversed_scores_detected(selection: Bonferroni | SampleSplit) -> None:
    # jax_privacy PR #270: the alternative sits *below* the null; both orientations are tried
    rng = np.random.default_rng(2)
    b = mu_lower_bound(
        rng.normal(0, 1, 50_000), rng.normal(-1, 1, 50_000), confidence=CONF, selection=selection
    )
    assert 0.85 < b.mu <= 1.0 and b.evidence.orientation == -1


def test_disjoint_supports_give_largest_finite_bound() -> None:
    # zero errors: the bound is limited only by n and the Bonferroni level
    n = 1000
    x, y = np.zeros(n), np.ones(n)
    b = epsilon_lower_bound(x, y, delta=1e-3, confidence=CONF, selection=Bonferroni())
    a = 0.05 / (2 * b.evidence.tests)
    u = -math.expm1(math.log(a) / n)
    assert b.evidence.false_positives == b.evidence.false_negatives == 0
    assert b.epsilon == pytest.approx(math.log((1 - 1e-3 - u) / u))
    assert mu_lower_bound(x, y, confidence=CONF, selection=Bonferroni()).mu == pytest.approx(
        2 * stats.norm.isf(u)
    )


def test_sample_split_fields() -> None:
    rng = np.random.default_rng(3)
    b = mu_lower_bound(
        rng.normal(0, 1, 10_001), rng.normal(1, 1, 9_999), confidence=CONF, selection=SampleSplit(0.3)
    )
    ev = b.evidence
    assert ev.trials == 20_000 and ev.tests == 1
    assert ev.null_trials == 10_001 - 3000 and ev.alt_trials == 9_999 - 2999
    assert "split" in ev.method
    with pytest.raises(ValueError, match="fraction"):
        SampleSplit(fraction=1.0)
    with pytest.raises(ValueError, match="selection"):
        mu_lower_bound([0.0, 1.0], [0.0, 1.0], confidence=CONF, selection="bonferroni")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="certification"):
        mu_lower_bound([0.0], [1.0], confidence=CONF, selection=SampleSplit())
    with pytest.raises(ValueError, match="null_samples"):
        mu_lower_bound([0.0, np.nan], [1.0, 2.0], confidence=CONF, selection=Bonferroni())


# ---------------------------------------------------------------------------------------
# coverage (validity over seeds)


@pytest.mark.slow
@pytest.mark.parametrize("selection", SELECTIONS, ids=["bonferroni", "split"])
def test_coverage_gaussian_mu(selection: Bonferroni | SampleSplit) -> None:
    mu, n, seeds = 1.0, 20_000, 100
    exceed = 0
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        b = mu_lower_bound(rng.normal(0, 1, n), rng.normal(mu, 1, n), confidence=CONF, selection=selection)
        exceed += b.mu > mu
    assert exceed <= 8  # 95 % bound: expect ≤ 5 of 100 (Bonferroni is conservative: ~0)


@pytest.mark.slow
@pytest.mark.parametrize("selection", SELECTIONS, ids=["bonferroni", "split"])
def test_coverage_laplace_epsilon(selection: Bonferroni | SampleSplit) -> None:
    # Laplace(1) shift 1: every threshold t >= 1 has likelihood ratio exactly e^1 (worst case
    # for selection bias); true epsilon at delta = 0 is 1.
    n, seeds = 20_000, 100
    exceed = 0
    for seed in range(seeds):
        rng = np.random.default_rng(2000 + seed)
        b = epsilon_lower_bound(
            rng.laplace(0, 1, n), rng.laplace(1, 1, n), delta=0.0, confidence=CONF, selection=selection
        )
        exceed += b.epsilon > 1.0
    assert exceed <= 8


@pytest.mark.slow
def test_naive_max_is_invalid_but_ours_is_not() -> None:
    # Documents why multiplicity control matters: the best of the grid at alpha/2 per rate
    # (no correction) overshoots much more often than the corrected bound.
    n, seeds = 10_000, 100
    naive = ours = 0
    for seed in range(seeds):
        rng = np.random.default_rng(3000 + seed)
        x, y = rng.laplace(0, 1, n), rng.laplace(1, 1, n)
        r = threshold_rates(x, y, confidence=CONF, selection=Bonferroni())
        k0 = np.asarray(r.false_positives)
        k1 = np.asarray(r.false_negatives)
        naive_eps = epsilon_from_rates(
            clopper_pearson_upper(k0, n, confidence=0.975),
            clopper_pearson_upper(k1, n, confidence=0.975),
            0.0,
        )
        naive += np.max(naive_eps) > 1.0
        ours += r.epsilon_lower_bound(0.0).epsilon > 1.0
    assert ours <= 5 and naive > ours


def test_coverage_monte_carlo_profile() -> None:
    mu, eps = 1.0, np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    truth = np.array([gdp_delta(mu, e) for e in eps])
    bad_lo = bad_up = bad_b = 0
    for seed in range(40):
        L = np.random.default_rng(4000 + seed).normal(mu * mu / 2, mu, 20_000)
        p = monte_carlo_profile(L, eps, confidence=CONF)
        bad_lo += np.any(np.asarray(p.delta_lower) > truth)
        bad_up += np.any(np.asarray(p.delta_upper) < truth * (1 - 1e-9))
        q = monte_carlo_profile(L, eps, confidence=CONF, method="bernstein")
        bad_b += np.any(np.asarray(q.delta_lower) > truth)
    assert bad_lo <= 4 and bad_up <= 4 and bad_b <= 4


# ---------------------------------------------------------------------------------------
# power: planted bugs, tightness


def test_planted_gaussian_bug_detected() -> None:
    # claim: sigma = 1 (mu = 1); implementation uses sigma' = 0.9 (true mu = 1.11); 2e5 trials
    claimed_mu = 1.0
    for seed in range(3):
        rng = np.random.default_rng(5000 + seed)
        x, y = rng.normal(0, 0.9, 100_000), rng.normal(1, 0.9, 100_000)
        r = threshold_rates(x, y, confidence=CONF, selection=Bonferroni())
        b = r.mu_lower_bound()
        assert b.mu > claimed_mu, b
        assert b.mu <= 1 / 0.9
        audit = audit_tradeoff_curve(r, gdp_tradeoff_curve(claimed_mu), claim="1-GDP")
        assert audit.violated and audit.max_gap > 0
        _json_roundtrip(audit)
    # the correct implementation is not flagged
    rng = np.random.default_rng(5100)
    r = threshold_rates(
        rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000), confidence=CONF, selection=Bonferroni()
    )
    assert r.mu_lower_bound().mu <= claimed_mu
    assert not audit_tradeoff_curve(r, gdp_tradeoff_curve(claimed_mu)).violated


def test_planted_laplace_bug_detected() -> None:
    # claim: scale 1 (1-DP); implementation uses scale 0.8 (true eps = 1.25); 2e5 trials
    for seed in range(3):
        rng = np.random.default_rng(6000 + seed)
        x, y = rng.laplace(0, 0.8, 100_000), rng.laplace(1, 0.8, 100_000)
        r = threshold_rates(x, y, confidence=CONF, selection=Bonferroni())
        b = r.epsilon_lower_bound(0.0)
        assert 1.0 < b.epsilon <= 1.25, b
        eps_grid = np.linspace(0, 1.5, 16)
        # the tightest profile implied by 1-DP (that of randomized response)
        claimed = np.maximum(0.0, (math.e - np.exp(eps_grid)) / (1.0 + math.e))
        a = audit_privacy_profile(r, eps_grid, claimed, claim="1-DP")
        assert a.violated and 1.0 in a.violated_epsilons
        _json_roundtrip(a)


def test_tightness_mu_one_gaussian() -> None:
    rng = np.random.default_rng(7)
    b = mu_lower_bound(
        rng.normal(0, 1, 10**6), rng.normal(1, 1, 10**6), confidence=CONF, selection=Bonferroni()
    )
    assert 0.85 <= b.mu <= 1.0, b
    assert b.evidence.trials == 2 * 10**6


def test_profile_audit_correct_gaussian_not_flagged() -> None:
    rng = np.random.default_rng(8)
    r = threshold_rates(
        rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000), confidence=CONF, selection=Bonferroni()
    )
    eps = np.linspace(0, 4, 21)
    claimed = [gdp_delta(1.0, e) for e in eps]
    a = audit_privacy_profile(r, eps, claimed, claim="1-GDP profile")
    assert not a.violated and a.max_gap <= 0
    buggy = [gdp_delta(0.8, e) for e in eps]  # claim too strong: flagged where the gap is largest
    a = audit_privacy_profile(r, eps, buggy, claim="0.8-GDP profile")
    assert a.violated and 0.0 < a.worst_epsilon < 2.0 and a.violating_indices


# ---------------------------------------------------------------------------------------
# Monte-Carlo privacy profile


def test_monte_carlo_profile_edge_cases() -> None:
    p = monte_carlo_profile(np.zeros(1000), [0.0, 1.0], confidence=CONF)
    assert p.delta_estimate == (0.0, 0.0) and p.delta_lower == (0.0, 0.0)
    b = epsilon_lower_bound_from_losses(np.zeros(1000), delta=0.0, confidence=CONF)
    assert b.epsilon == 0.0
    # 10 % of outputs impossible under x': delta(eps) >= 0.1 for every eps
    L = np.concatenate([np.full(9000, -0.1), np.full(1000, np.inf)])
    b = epsilon_lower_bound_from_losses(L, delta=0.05, confidence=CONF)
    assert b.epsilon == math.inf
    assert math.isinf(_json_roundtrip(b)["epsilon"])
    p = monte_carlo_profile(L, [5.0], confidence=CONF)
    assert p.delta_estimate[0] == pytest.approx(0.1)
    assert p.delta_lower[0] < 0.1 < p.delta_upper[0]
    with pytest.raises(ValueError, match="epsilons"):
        epsilon_lower_bound_from_losses(L, delta=0.05, confidence=CONF, method="bernstein")
    with pytest.raises(ValueError, match="method"):
        monte_carlo_profile(L, [1.0], confidence=CONF, method="nope")  # type: ignore[arg-type]


def test_epsilon_from_losses_valid_and_tight() -> None:
    mu, delta = 1.0, 1e-3
    from scipy.optimize import brentq

    true_eps = brentq(lambda e: gdp_delta(mu, e) - delta, 0, 20)
    L = np.random.default_rng(9).normal(mu * mu / 2, mu, 10**6)
    b = epsilon_lower_bound_from_losses(L, delta=delta, confidence=CONF)
    assert 0.8 * true_eps < b.epsilon <= true_eps
    g = np.round(np.arange(0, 6, 0.05), 2)
    bb = epsilon_lower_bound_from_losses(L, delta=delta, confidence=CONF, method="bernstein", epsilons=g)
    assert 0.8 * true_eps < bb.epsilon <= true_eps
    _json_roundtrip(bb)


# ---------------------------------------------------------------------------------------
# statistics


class _GaussianShift:
    """N(0, 1) under x, N(mu, 1) under x'; exposes the exact privacy loss."""

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def privacy_loss(self, o: np.ndarray) -> np.ndarray:
        return self.mu * self.mu / 2 - self.mu * np.asarray(o, dtype=float)


def test_statistics_vectorised_and_validated() -> None:
    rng = np.random.default_rng(10)
    o = rng.normal(size=(10**6, 3))
    s = Projection((1.0, 0.0, 0.0))(o)
    assert s.shape == (10**6,) and np.array_equal(s, o[:, 0])
    assert Identity()(o[:, :1]).shape == (10**6,)
    assert Indicator((1, 2))(rng.integers(0, 5, 10**6)).mean() == pytest.approx(0.4, abs=0.01)
    with pytest.raises(ValueError, match="outputs"):
        Identity()(o)
    with pytest.raises(ValueError, match="direction"):
        Projection((0.0, 0.0))
    with pytest.raises(ValueError, match="privacy_loss"):
        PrivacyLoss(object())
    assert isinstance(default_statistic(o[:, 0], _GaussianShift(1.0)), PrivacyLoss)
    with pytest.raises(ValueError, match="Projection"):
        default_statistic(o)


def test_white_box_privacy_loss_audit() -> None:
    mech = _GaussianShift(1.0)
    stat = PrivacyLoss(mech)
    rng = np.random.default_rng(11)
    x, y = stat(rng.normal(0, 1, 100_000)), stat(rng.normal(1, 1, 100_000))
    b = mu_lower_bound(x, y, confidence=CONF, selection=Bonferroni())
    assert 0.9 < b.mu <= 1.0 and b.evidence.orientation == -1  # small L is evidence for x'
    p = monte_carlo_profile(x, [0.0, 1.0], confidence=CONF)
    assert all(lo <= gdp_delta(1.0, e) for lo, e in zip(p.delta_lower, p.epsilons))
