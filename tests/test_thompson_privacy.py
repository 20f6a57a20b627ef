"""Thompson sampling's certified privacy (Ou, Avella Medina & Cummings 2024) and the published
bounds beside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account
from dpaudit.analyses.rnm_gaussian import published_bound_theorem7
from dpaudit.analyses.thompson_sampling import (
    RoundState,
    ThompsonConfig,
    corollary1_epsilon,
    round_privacy,
    theorem7_reachable_check,
    theorem8_delta,
    theorem8_epsilon,
    thompson_report,
)
from dpaudit.conversions import gdp_delta, gdp_epsilon


def test_tight_mu_formula_and_paper_formula():
    cfg = ThompsonConfig(horizon=100_000, arms=5, prepulls=100, variance_scale=10)
    assert cfg.mu_paper == pytest.approx(math.sqrt(1e5 / 1010))
    assert cfg.mu_tight == pytest.approx(math.sqrt((1e5 - 500) / 1010), rel=1e-14)
    assert cfg.mu_tight >= math.sqrt((1e5 - 500) / 1010)  # rounded up, never down
    assert cfg.private_rounds == 99_500


def test_algorithm1_counts_rounds_after_the_first_observation():
    cfg = ThompsonConfig(horizon=1000, arms=2)
    # b = 0: the changed reward leaks only after it is observed, with n_j >= 1
    assert cfg.mu_tight == pytest.approx(math.sqrt(999 / 2))
    # Theorem 4's general formula at b = 0 gives sqrt(T/c): sqrt(2) above Theorem 3's sqrt(T/2)
    assert cfg.mu_paper == pytest.approx(math.sqrt(1000))


def test_event_accounts_to_the_tight_mu():
    cfg = ThompsonConfig(horizon=5000, arms=4, prepulls=10, variance_scale=3)
    r = account(cfg.event(), delta=1e-6)
    assert r.mu == pytest.approx(cfg.mu_tight, rel=1e-12)
    assert r.bounds["gdp"].value == pytest.approx(gdp_epsilon(cfg.mu_tight, 1e-6), rel=1e-12)
    assert r.num_releases == 5000 - 40


def test_cli_example_reports_every_method():
    cfg = ThompsonConfig(horizon=100_000, arms=5, prepulls=100, variance_scale=10)
    r = thompson_report(cfg, delta=1e-6)
    d = r.to_dict()
    for m in ("gdp", "rdp", "pld", "advanced", "basic", "paper", "paper_rdp", "paper_standard"):
        assert d["bounds"][m] is not None and math.isfinite(d["bounds"][m])
    assert d["best"]["method"] == "gdp"
    # orders: exact GDP <= PLD (pessimistic) <= RDP <= advanced, basic
    b = d["bounds"]
    assert b["gdp"] <= b["pld"] <= b["gdp"] + 1e-3
    assert b["gdp"] < b["rdp"] < b["advanced"]
    # the tight count is below the paper's Theorem 4 value
    assert b["gdp"] < b["paper"]


def test_theorem8_closed_form_is_the_minimum_over_alpha():
    cfg = ThompsonConfig(horizon=1000, arms=2)
    delta = 1e-5
    best = min(1000 * a / 4 + math.log(1 / delta) / (a - 1) for a in [1 + i / 10000 for i in range(1, 50000)])
    assert theorem8_epsilon(cfg, delta) == pytest.approx(best, rel=1e-6)
    assert theorem8_delta(cfg, theorem8_epsilon(cfg, delta)) == pytest.approx(delta, rel=1e-9)


def test_corollary1_matches_theorem7_composition():
    # Corollary 1 at a fixed per-round δ0 must not beat the optimised value
    cfg = ThompsonConfig(horizon=1000, arms=10)
    delta = 1e-5
    d0 = delta / 1000 / 2
    e0 = 1 / (2 * math.sqrt(2)) * math.sqrt(math.log(9 / (2 * d0)))
    fixed = e0 * math.sqrt(2 * 1000 * math.log(1 / (delta - 1000 * d0))) + 1000 * e0 * math.expm1(e0)
    opt = corollary1_epsilon(cfg, delta)
    assert opt <= fixed
    assert opt > 0.5 * fixed


@settings(max_examples=30, deadline=None)
@given(T=st.integers(100, 10**6), N=st.integers(2, 20), b=st.integers(0, 50), c=st.floats(1.0, 1e3))
def test_tight_never_exceeds_paper_for_b_at_least_one_and_is_monotone(T, N, b, c):
    if b * N >= T:
        with pytest.raises(ValueError, match="prepulls"):
            ThompsonConfig(T, N, b, c)
        return
    cfg = ThompsonConfig(T, N, b, c)
    assert cfg.mu_tight <= cfg.mu_paper * (1 + 1e-12) or b == 0
    bigger_c = ThompsonConfig(T, N, b, c * 2)
    assert bigger_c.mu_tight < cfg.mu_tight
    longer = ThompsonConfig(T + 1, N, b, c)
    assert longer.mu_tight >= cfg.mu_tight


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"horizon": 0, "arms": 2}, "horizon"),
        ({"horizon": 10, "arms": 1}, "arms"),
        ({"horizon": 10, "arms": 2, "prepulls": -1}, "prepulls"),
        ({"horizon": 10, "arms": 2, "variance_scale": 0.5}, "variance_scale"),
        ({"horizon": 10, "arms": 2, "prepulls": 5}, "prepulls"),
    ],
)
def test_bad_config(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ThompsonConfig(**kwargs)


# ---------------------------------------------------------------------------------------
# Ou, Avella Medina & Cummings (2024), Theorem 7 in its own setting: one round of Algorithm 1 over
# reachable states
# (docs/finding-rnm-gaussian.md; README Findings item 1). Every number is recomputed here.


def _symmetric_probs_by_quad(state, values):
    """P(arm 0 wins) by scipy quadrature — independent of dpaudit.analyses.rnm_gaussian's integrator —
    for states whose other arms are identical (each then wins with (1 − P₀)/(N − 1))."""
    from scipy import integrate, special

    n = np.asarray(state.counts, dtype=float)
    sig = 1.0 / np.sqrt(n + 1.0)
    assert len(set(state.counts[1:])) == 1 and len(set(state.means[1:])) == 1
    k = len(n) - 1

    def integrand(x):
        return (np.exp(-0.5 * ((x - values[0]) / sig[0]) ** 2) / (sig[0] * math.sqrt(2 * math.pi))
                * special.ndtr((x - values[1]) / sig[1]) ** k)

    p0 = integrate.quad(integrand, values[0] - 12 * sig[0], values[0] + 12 * sig[0],
                        epsabs=1e-15, epsrel=1e-13, limit=200)[0]
    return np.array([p0] + [(1 - p0) / k] * k)


def _delta_and_pure_by_quad(state, eps):
    f, fp, _ = state.release()
    p, q = _symmetric_probs_by_quad(state, f), _symmetric_probs_by_quad(state, fp)
    d = max(np.maximum(p - math.exp(eps) * q, 0).sum(), np.maximum(q - math.exp(eps) * p, 0).sum())
    return float(d), float(np.max(np.abs(np.log(p) - np.log(q))))


# (N, claimed δ): (counts, posterior means before the change, exact δ at the published ε);
# arm 0 holds the changed reward: μ̂_0 = 0 → 1/2. Witnesses found by theorem7_reachable_check
# and the two-group search in the finding document.
REACHABLE_WITNESSES = {
    (2, 1e-1): ((1, 10**6), (0.0, 0.6985316172419263), 0.13637),
    (2, 1e-2): ((1, 10**6), (0.0, 0.94928907975851), 0.082047),
    (2, 1e-3): ((1, 10**6), (0.0, 0.999999000001), 0.049872),
    (5, 1e-2): ((1,) + (1000,) * 4, (0.0,) + (1000 / 1001,) * 4, 0.062840),
    (5, 1e-3): ((1,) + (50,) * 4, (0.0,) + (50 / 51,) * 4, 0.038216),
    (10, 1e-2): ((1,) + (100,) * 9, (0.0, 0.9827442405663553) + (0.982187058637203,) * 8, 0.054006),
    (10, 1e-3): ((1, 50) + (20,) * 8, (0.0, 50 / 51) + (20 / 21,) * 8, 0.034521),
}


@pytest.mark.parametrize("key", sorted(REACHABLE_WITNESSES))
def test_theorem7_violated_at_reachable_states(key):
    # exact δ at the published ε for a reachable witness state, above the claimed δ
    n_arms, delta = key
    counts, means, pinned = REACHABLE_WITNESSES[key]
    state = RoundState(counts, means)
    eps = published_bound_theorem7(n_arms, delta)
    d, _ = round_privacy(state, eps)
    assert d == pytest.approx(pinned, rel=1e-4)
    assert d > delta  # the claim is false in its own setting ...
    assert d <= gdp_delta(2**-0.5, eps)  # ... the GDP bound holds


@pytest.mark.slow
def test_theorem7_reachable_search_two_arms():
    # the full search for N = 2 (a few seconds): the worst reachable state has the other arm
    # pulled very often, at the mean that makes the threshold test optimal — or at its largest
    # reachable mean 1 − 1/(n+1) when the optimum ε + 1/4 lies beyond it (δ = 10⁻³)
    for delta, want in [(1e-2, 0.082047), (1e-3, 0.049872)]:
        chk = theorem7_reachable_check(2, delta, other_counts=(1, 100, 10**6), changed_counts=(1, 2),
                                       starts=1)
        assert chk.delta_exact == pytest.approx(want, rel=1e-3)
        assert chk.violated
    # δ = 10⁻⁶: every reachable state's pure ε is below the published ε, so δ(ε_pub) = 0
    chk = theorem7_reachable_check(2, 1e-6, other_counts=(1, 100, 10**6), changed_counts=(1, 2), starts=1)
    assert chk.delta_exact == 0.0 and not chk.violated
    assert chk.pure_epsilon == pytest.approx(1.11459, abs=1e-4)
    assert chk.pure_epsilon < chk.epsilon_published == pytest.approx(1.28074, abs=1e-4)


def test_theorem7_at_one_in_a_million_fails_from_twelve_arms():
    # the changed arm pulled once (reward 0 → 1), the other 11 arms pulled 4 times with all
    # rewards 1 (μ̂ = 0.8): pure ε 1.4023 > ε_pub = 1.3929, δ = 8.4e-4 ≫ 10⁻⁶
    state = RoundState((1,) + (4,) * 11, (0.0,) + (0.8,) * 11)
    eps = published_bound_theorem7(12, 1e-6)
    d, pure = round_privacy(state, eps)
    assert eps == pytest.approx(1.39287, abs=1e-4)
    assert pure == pytest.approx(1.4023, abs=1e-4) and d == pytest.approx(8.41e-4, rel=1e-2)
    # an independent quadrature (scipy) of the same two output distributions agrees
    d_q, pure_q = _delta_and_pure_by_quad(state, eps)
    assert d_q == pytest.approx(d, rel=1e-6) and pure_q == pytest.approx(pure, rel=1e-8)
    # with 10 arms the same construction stays below the published ε (no violation found)
    state10 = RoundState((1,) + (5,) * 9, (0.0,) + (5 / 6,) * 9)
    d10, pure10 = round_privacy(state10, published_bound_theorem7(10, 1e-6))
    assert d10 == 0.0 and pure10 == pytest.approx(1.35955, abs=1e-4)


def test_round_state_rejects_unreachable_states():
    with pytest.raises(ValueError, match="means\\[1\\]"):
        RoundState((1, 1), (0.0, 0.9))  # one pull: μ̂ ≤ 1/2
    with pytest.raises(ValueError, match="counts\\[0\\]"):
        RoundState((0, 3), (0.0, 0.1))  # the changed reward must have been observed
    with pytest.raises(ValueError, match="means\\[0\\]"):
        RoundState((1, 3), (0.2, 0.1))  # n_0 = 1: μ̂_0 = 0 (it rises to 1/2 on the neighbour)
