"""Thompson sampling's certified privacy (seed 004) and the published bounds beside it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account
from dpaudit.conversions import gdp_epsilon
from dpaudit.thompson import (
    ThompsonConfig,
    corollary1_epsilon,
    theorem8_delta,
    theorem8_epsilon,
    thompson_report,
)


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
