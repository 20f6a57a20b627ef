"""Tests of dpaudit.analyses.gaussian_argmax and dpaudit.analyses.rnm_gaussian: exact heterogeneous Gaussian
report-noisy-max.

Oracles: the two-candidate closed form, 25-digit mpmath quadrature, Monte Carlo, the GDP
bound (which must never be exceeded) and, for N = 2, the fact that the worst case *equals*
the GDP profile of μ = s/√(σ_1² + σ_2²). The last tests pin the finding of
docs/finding-rnm-gaussian.md: Theorems 6/7 of Ou, Avella Medina & Cummings (2024) are false.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_ndtr

from dpaudit.analyses.gaussian_argmax import (
    argmax_distribution,
    argmax_log_distribution,
    log_argmax_probability,
)
from dpaudit.analyses.rnm_gaussian import (
    exact_epsilon,
    exact_privacy_profile,
    gdp_bound,
    published_bound_theorem6,
    published_bound_theorem7,
    worst_case_epsilon,
    worst_case_profile,
)
from dpaudit.conversions import gdp_delta, gdp_epsilon, gdp_log_delta
from tests.mp_reference import log_argmax_mp

H = 2 ** -0.5  # one TS round with n_j = 1: s = 1/2, σ = 1/√2, s/σ = 1/√2
FAST = settings(max_examples=25, deadline=None, derandomize=True)


def _private_gdp_delta(mu: float, eps: float) -> float:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the brief's private formula (cross-check)."""
    with mp.workdps(40):
        mu_, e_ = mp.mpf(mu), mp.mpf(eps)
        return float(mp.ncdf(-e_ / mu_ + mu_ / 2) - mp.exp(e_) * mp.ncdf(-e_ / mu_ - mu_ / 2))


# ---------------------------------------------------------------------------------------
# 1. argmax distribution


@pytest.mark.parametrize(
    "f1, f2, s1, s2",
    [(0.0, 0.5, H, H), (1.0, -2.0, 0.3, 2.0), (0.0, 30.0, 1.0, 1.0), (-5.0, 5.0, 0.01, 3.0),
     (0.0, 1e-3, 1.0, 1e-4)],
)
def test_two_candidates_closed_form(f1: float, f2: float, s1: float, s2: float) -> None:
    lp = argmax_log_distribution([f1, f2], [s1, s2])
    scale = math.hypot(s1, s2)
    want = np.array([log_ndtr((f1 - f2) / scale), log_ndtr((f2 - f1) / scale)])
    # log-space agreement = relative accuracy of P, including P ≈ 1e-198
    assert np.all(np.abs(lp - want) <= 1e-12 * np.maximum(1.0, np.abs(want)))
    assert abs(np.exp(lp).sum() - 1.0) < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(
    "f, s, i",
    [([0.0, 3.0, -2.0, 1.0], [1.0, 0.01, 0.3, 2.0], 2),  # P ≈ e^-142.6, sharp competitor
     ([0.0, 0.2, 0.1], [1.0, 1e-3, 1e-4], 2)],  # P ≈ e^-4957, two very sharp competitors
)
def test_against_mpmath(f: list[float], s: list[float], i: int) -> None:
    lp = argmax_log_distribution(f, s)
    ref = float(log_argmax_mp(f, s, i))
    assert abs(lp[i] - ref) <= 1e-12 * max(1.0, abs(ref))  # relative accuracy of a tiny P
    assert abs(np.exp(lp).sum() - 1.0) < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize(
    "f, s, i",
    [([0.99948133, 0.0, 0.0, 0.0, 0.0], [0.02277438, 0.70710678, 0.20851441, 0.20851441, 0.25819889], 1),
     ([0.0, 0.0, 0.0], [1e-3, 1.0, 1.0], 0)],  # a sharp leader (σ ratio 31; the retired 16-node
)                                            # bandit rule was off by 4e-7 here) / a narrow candidate
def test_rows_against_mpmath(f: list[float], s: list[float], i: int) -> None:
    ref = float(log_argmax_mp(f, s, i))
    got = log_argmax_probability(np.array([f]), np.array([s]), np.array([i]))[0]
    assert abs(got - ref) <= 1e-12 * max(1.0, abs(ref))


def test_rows_are_independent_of_chunking_and_match_the_vector_form() -> None:
    rng = np.random.default_rng(9)
    B, N = 300, 5
    mu = rng.normal(0.0, 1.0, (B, N))
    sg = np.exp(rng.uniform(-4.0, 1.0, (B, N)))
    cand = rng.integers(0, N, B)
    a = log_argmax_probability(mu, sg, cand)
    b = log_argmax_probability(mu, sg, cand, rows_per_chunk=7)
    assert np.array_equal(a, b)
    for k in range(0, B, 37):
        assert abs(a[k] - argmax_log_distribution(mu[k], sg[k])[cand[k]]) <= 1e-13 * max(1.0, abs(a[k]))
    every = np.tile(np.arange(N), 20)  # all candidates of 20 rows: probabilities sum to 1
    full = log_argmax_probability(np.repeat(mu[:20], N, 0), np.repeat(sg[:20], N, 0), every)
    assert np.allclose(np.exp(full).reshape(20, N).sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_rows_validation() -> None:
    mu, sg = np.zeros((2, 3)), np.ones((2, 3))
    with pytest.raises(ValueError, match="candidates"):
        log_argmax_probability(mu, sg, np.array([0, 3]))
    with pytest.raises(ValueError, match="shape"):
        log_argmax_probability(mu, sg[:1], np.array([0, 1]))
    with pytest.raises(ValueError, match="sigmas"):
        log_argmax_probability(mu, -sg, np.array([0, 1]))
    with pytest.raises(ValueError, match="means"):
        log_argmax_probability(np.full((2, 3), np.nan), sg, np.array([0, 1]))
    with pytest.raises(ValueError, match="rows_per_chunk"):
        log_argmax_probability(mu, sg, np.array([0, 1]), rows_per_chunk=0)


def test_against_monte_carlo() -> None:
    rng = np.random.default_rng(4)
    f = np.array([0.3, 0.0, -0.4, 0.1, 0.25])
    s = np.array([1.0, 0.2, 2.0, H, 0.05])
    m = 400_000
    wins = np.argmax(f + rng.normal(size=(m, f.size)) * s, axis=1)
    freq = np.bincount(wins, minlength=f.size) / m
    p = argmax_distribution(f, s)
    se = np.sqrt(p * (1 - p) / m)
    assert np.all(np.abs(freq - p) < 5 * se + 1e-12)


@FAST
@given(
    st.lists(st.tuples(st.floats(-5, 5), st.floats(-2, 1)), min_size=2, max_size=7),
)
def test_probabilities_sum_to_one(cands: list[tuple[float, float]]) -> None:
    f = [c[0] for c in cands]
    s = [10.0 ** c[1] for c in cands]  # σ from 0.01 to 10
    p = argmax_distribution(f, s)
    assert np.all(p >= 0) and abs(p.sum() - 1.0) < 1e-10


def test_invariances_and_validation() -> None:
    f, s = [0.3, -1.0, 0.7], [1.0, 0.5, 2.0]
    p = argmax_distribution(f, s)
    assert np.allclose(argmax_distribution(np.add(f, 17.0), s), p, atol=1e-13, rtol=0)  # shift
    perm = [2, 0, 1]
    assert np.allclose(argmax_distribution(np.take(f, perm), np.take(s, perm)), p[perm], atol=1e-13, rtol=0)
    assert np.allclose(argmax_distribution([0.0, 0.0, 0.0], 1.0), 1 / 3, atol=1e-13)
    with pytest.raises(ValueError, match="sigmas"):
        argmax_distribution([0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="values"):
        argmax_distribution([0.0, np.nan], 1.0)
    with pytest.raises(ValueError, match="sigmas must have 1 or 2"):
        argmax_distribution([0.0, 1.0], [1.0, 1.0, 1.0])


# ---------------------------------------------------------------------------------------
# 2. exact profile of one pair


def test_profile_two_candidates_is_binary_gaussian_test() -> None:
    # N = 2: output 1{Z > t}; δ(ε) = max over the two sets of Φ(μ − t) − e^ε Φ(−t) etc.
    mu_eff, t = 0.5, 0.3
    prof = exact_privacy_profile([0.0, t], [0.5, t], [H, H], [0.0, 0.2, 1.0])
    p, q = math.erfc(t / math.sqrt(2)) / 2, math.erfc((t - mu_eff) / math.sqrt(2)) / 2
    want = [max(q - math.exp(e) * p, (1 - p) - math.exp(e) * (1 - q), 0.0) for e in prof.epsilons]
    assert np.allclose(prof.deltas, want, atol=1e-13, rtol=1e-11)
    assert prof.pure_epsilon == pytest.approx(max(abs(math.log(q / p)), abs(math.log((1 - q) / (1 - p)))))


def test_exact_epsilon_inverts_profile() -> None:
    f, fp, s = [0.0, 0.4, -0.2, 0.1], [0.5, 0.4, -0.2, 0.1], [H, 0.3, 1.0, H]
    for delta in (0.1, 1e-2, 1e-4):
        e = exact_epsilon(f, fp, s, delta)
        assert exact_privacy_profile(f, fp, s, e).deltas[0] == pytest.approx(delta, rel=1e-9)
    assert exact_epsilon(f, fp, s, 0.99) == 0.0


@FAST
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-3, 3), min_size=n, max_size=n),  # f
            st.lists(st.floats(-1.5, 0.7), min_size=n, max_size=n),  # log10 σ
            st.lists(st.floats(0.01, 3.0), min_size=n, max_size=n),  # s
            st.integers(0, n - 1),  # changed coordinate
            st.sampled_from([-1.0, 1.0]),  # direction
            st.floats(0.0, 1.0),  # fraction of s_k used
        )
    )
)
def test_exact_profile_never_exceeds_gdp_and_is_monotone(args: tuple) -> None:
    f, logsig, s, k, sign, frac = args
    sig = 10.0 ** np.asarray(logsig)
    fp = np.array(f, dtype=float)
    fp[k] += sign * frac * s[k]
    eps = np.linspace(0.0, 6.0, 25)
    prof = exact_privacy_profile(f, fp, sig, eps)
    mu = gdp_bound(s, sig)
    assert mu == pytest.approx(max(np.asarray(s) / sig))
    for e, d in zip(eps, prof.deltas):
        assert d <= gdp_delta(mu, float(e)) + 1e-13
    assert np.all(np.diff(prof.deltas) <= 1e-15)  # non-increasing in ε
    assert np.all(prof.deltas[eps >= prof.pure_epsilon] <= 1e-15)


def test_gdp_formula_cross_check() -> None:
    for mu, e in [(H, 0.5), (H, 1.28), (0.5, 2.0)]:
        assert math.exp(gdp_log_delta(mu, e)) == pytest.approx(_private_gdp_delta(mu, e), rel=1e-10)


# ---------------------------------------------------------------------------------------
# 3./4. worst case


@pytest.mark.slow
@pytest.mark.parametrize("sig", [[H, H], [0.2, 1.5]])
def test_worst_case_two_candidates_equals_gdp_of_difference(sig: list[float]) -> None:
    s = [0.5, 0.4]
    eps = np.array([0.2, 1.5])
    wc = worst_case_profile(s, sig, eps, search="symmetric")
    mu_eff = max(s[k] / math.hypot(*sig) for k in range(2))
    want = np.exp(gdp_log_delta(mu_eff, eps))
    assert np.allclose(wc.deltas, want, rtol=1e-8, atol=0)
    # the returned pair is an honest neighbour pair attaining the value, in the stated direction
    for e, d, pair in zip(eps, wc.deltas, wc.pairs):
        diff = pair.values_prime - pair.values
        assert np.count_nonzero(diff) == 1
        assert diff[pair.changed] == pytest.approx(pair.direction * s[pair.changed])
        prof = exact_privacy_profile(pair.values, pair.values_prime, sig, e)
        assert prof.deltas_forward[0] == pytest.approx(d, rel=1e-12)
    we = worst_case_epsilon(s, sig, 1e-6, search="symmetric")
    assert we.epsilons[0] == pytest.approx(gdp_epsilon(mu_eff, 1e-6), rel=1e-7)


def test_worst_case_dominates_random_pairs_and_is_below_gdp() -> None:
    s, sig = [0.5, 0.5, 0.5, 0.5], [H, H, H, H]
    eps = 1.0
    wc = worst_case_profile(s, sig, eps, search="symmetric")
    rng = np.random.default_rng(0)
    for _ in range(30):
        f = rng.normal(0, 1.5, 4)
        fp = f.copy()
        fp[0] += 0.5
        assert exact_privacy_profile(f, fp, sig, eps).deltas[0] <= wc.deltas[0] * (1 + 1e-9)
    assert wc.deltas[0] < math.exp(gdp_log_delta(H, eps))


@pytest.mark.slow
def test_full_search_confirms_symmetric_optimum_n3() -> None:
    # homogeneous σ: the symmetric configuration (all other candidates equal) is the optimum;
    # the full multi-start search and its refinement restart find no improvement
    wc = worst_case_profile(0.5, [H, H, H], 1.28, search="full")
    assert wc.deltas[0] == pytest.approx(wc.symmetric[0], rel=1e-9)
    assert abs(wc.relative_refinement_gain[0]) < 1e-9


def test_worst_case_validation() -> None:
    with pytest.raises(ValueError, match="search"):
        worst_case_profile(0.5, [H, H], 1.0, search="grid")
    with pytest.raises(ValueError, match="at least 2"):
        worst_case_profile(0.5, [H], 1.0)
    with pytest.raises(ValueError, match="epsilons"):
        worst_case_profile(0.5, [H, H], -1.0)
    with pytest.raises(ValueError, match="sensitivities"):
        gdp_bound([0.5, -1.0], [H, H])


# ---------------------------------------------------------------------------------------
# 5./6. the published bounds and the finding


def test_published_bounds_as_stated() -> None:
    for n in (2, 5, 10):
        for delta in (1e-1, 1e-2, 1e-6):
            e7 = published_bound_theorem7(n, delta)
            want = math.sqrt(math.log((n - 1) / (2 * delta))) / (2 * math.sqrt(2))
            assert e7 == pytest.approx(want, rel=1e-15)
            # Theorem 7 = Theorem 6 with s_i = 1/(n_i + 1), σ_i² = 1/(n_i + 1), n_i = 1
            assert published_bound_theorem6([0.5] * n, [H] * n, delta) == pytest.approx(e7, rel=1e-15)
    assert published_bound_theorem6([1.0, 2.0], [1.0, 1.0], 0.01) == pytest.approx(math.sqrt(math.log(50.0)))
    with pytest.raises(ValueError, match="delta"):
        published_bound_theorem7(2, 0.6)  # log((N−1)/(2δ)) < 0
    with pytest.raises(ValueError, match="num_arms"):
        published_bound_theorem7(1, 0.01)


# exact worst-case δ at the published ε, homogeneous TS round (every arm pulled once), and the
# exact worst-case ε at δ; rounded values of docs/finding-rnm-gaussian.md (4 significant digits)
PINNED_HOMOGENEOUS = {
    # (N, δ_claimed): (δ_exact at ε_published, ε_exact at δ_claimed)
    (2, 1e-2): (0.02552, 0.9195),
    (2, 1e-6): (0.001528, 2.254),
    (5, 1e-3): (0.01963, 1.684),
    (5, 1e-6): (0.004710, 2.795),
    (10, 1e-2): (0.03352, 1.238),
    (10, 1e-6): (0.005731, 2.951),
}


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PINNED_HOMOGENEOUS))
def test_theorem6_is_violated_on_score_vectors_of_one_ts_round_shape(key: tuple[int, float]) -> None:
    """Theorem 6 (arbitrary neighbouring score vectors) at Theorem 7's parameters: false. These
    score pairs are not states one Thompson-sampling round can reach, so they refute Theorem 6,
    not Theorem 7 in its own setting (that is tests/test_thompson_privacy.py)."""
    n, delta = key
    eps_pub = published_bound_theorem7(n, delta)
    wc = worst_case_profile(0.5, [H] * n, eps_pub, search="symmetric")
    d_exact = float(wc.deltas[0])
    assert d_exact > 2 * delta  # the published (ε, δ) claim is false
    assert d_exact == pytest.approx(PINNED_HOMOGENEOUS[key][0], rel=1e-3)
    assert d_exact <= gdp_delta(H, eps_pub)  # ... while the GDP bound holds
    # the witness pair, re-evaluated independently, violates the claim
    pair = wc.pairs[0]
    prof = exact_privacy_profile(pair.values, pair.values_prime, [H] * n, eps_pub)
    assert prof.deltas[0] > 2 * delta
    we = worst_case_epsilon(0.5, [H] * n, delta, search="symmetric")
    assert we.epsilons[0] == pytest.approx(PINNED_HOMOGENEOUS[key][1], rel=1e-3)
    assert eps_pub < we.epsilons[0] <= gdp_epsilon(H, delta)


@pytest.mark.slow
def test_theorem6_holds_at_delta_one_tenth_homogeneous_but_not_heterogeneous() -> None:
    # homogeneous round, δ = 0.1: the claim happens to hold (δ_exact 0.0620 < 0.1 for N = 2)
    eps_pub = published_bound_theorem7(2, 0.1)
    hom = worst_case_profile(0.5, [H, H], eps_pub, search="symmetric")
    assert hom.deltas[0] == pytest.approx(0.06198, rel=1e-3) and hom.deltas[0] < 0.1
    # the other arm pulled 10^4 times (s = 1/10001, σ = 1/√10001; still max s/σ = 1/√2):
    # the worst case approaches the GDP bound and exceeds the claimed δ = 0.1
    m = 1e4
    het = worst_case_profile([0.5, 1 / (m + 1)], [H, (m + 1) ** -0.5], eps_pub, search="symmetric")
    assert het.deltas[0] == pytest.approx(0.1363, rel=1e-3) and het.deltas[0] > 0.1
    assert het.deltas[0] <= gdp_delta(H, eps_pub)
