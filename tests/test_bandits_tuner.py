"""The (b, c) tuner of Gaussian Thompson sampling (bandits.thompson.tuner) at reduced scale."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bandits import GaussianTS, parse_env, simulate
from bandits.thompson.frontier import (
    budget_pair,
    candidate_prepulls,
    frontier_c,
    max_prepulls,
    resolve_target_mu,
    rule_of_thumb_prepulls,
)
from bandits.thompson.tuner import plot_tuning, tune_thompson
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.conversions import gdp_epsilon, gdp_mu

SPEC = "bernoulli:0.75,0.625,0.5,0.375,0.25"


# ----------------------------------------------------------------------------------------------- tuner


def test_frontier_never_exceeds_budget_and_is_tight():
    rng = np.random.default_rng(0)
    for _ in range(300):
        T = int(rng.integers(10, 10**7))
        N = int(rng.integers(2, 50))
        mu = float(np.exp(rng.uniform(-3, 4)))
        bmax = max_prepulls(T, N, mu)
        for b in {0, 1, bmax // 2, bmax} - ({0} if (T - 1) / (2 * mu * mu) < 1 else set()):
            if b > bmax or (b > 0 and bmax == 0):
                continue
            c = frontier_c(b, T, N, mu)
            m = ThompsonConfig(T, N, b, c).mu_tight
            assert c >= 1.0
            assert m <= mu, (T, N, mu, b, c, m)
            assert m >= mu * (1 - 1e-12)


def test_max_prepulls_is_the_exact_boundary():
    for T, N, mu in [(100_000, 5, 1.0), (100_000, 5, 2.0), (100_000, 5, 5.0), (1000, 2, 0.3), (50, 10, 1.0)]:
        bmax = max_prepulls(T, N, mu)
        assert frontier_c(bmax, T, N, mu) >= 1.0
        with pytest.raises(ValueError, match="prepulls"):
            frontier_c(bmax + 1, T, N, mu)
    assert max_prepulls(100_000, 5, 1.0) == 16666  # (T − μ²)/(N + μ²) = 99999/6


def test_candidates_are_log_spaced_and_include_zero_and_max():
    bs = candidate_prepulls(100_000, 5, 1.0, num=10)
    assert bs[0] == 0 and bs[-1] == 16666 and len(bs) == 10
    assert all(b1 < b2 for b1, b2 in zip(bs, bs[1:]))
    ratios = np.diff(np.log(bs[2:]))
    assert ratios.max() / ratios.min() < 1.5  # roughly geometric


def test_budget_pair_rule_and_algorithm1_under_budget():
    b, c = budget_pair(100_000, 5, 1.0)
    assert b == rule_of_thumb_prepulls(100_000, 5, 1.0) == 1897
    assert ThompsonConfig(100_000, 5, b, c).mu_tight <= 1.0
    assert budget_pair(100, 5, 10.0) == (0, 1.0)  # sqrt(99/2) < 10: Algorithm 1 fits
    assert rule_of_thumb_prepulls(100_000, 5, 0.01) == max_prepulls(100_000, 5, 0.01)


def test_resolve_target_epsilon_uses_exact_gdp_mu():
    mu = resolve_target_mu(target_epsilon=2.0, delta=1e-5)
    assert mu == gdp_mu(2.0, 1e-5)
    assert float(gdp_epsilon(mu, 1e-5)) <= 2.0
    with pytest.raises(ValueError, match="delta"):
        resolve_target_mu(target_epsilon=2.0)
    with pytest.raises(ValueError, match="exactly one"):
        resolve_target_mu(1.0, 2.0, 1e-5)
    with pytest.raises(ValueError, match="target mu"):
        resolve_target_mu(-1.0)


@pytest.mark.slow
def test_tuner_common_random_numbers_and_reduced_scale_findings(tmp_path):
    env = parse_env(SPEC)
    res = tune_thompson(env, 10_000, target_mu=1.0, reps=5, seed=3, progress=False)
    bs = [c.b for c in res.candidates]
    grid = candidate_prepulls(10_000, 5, 1.0)
    assert set(grid) | {rule_of_thumb_prepulls(10_000, 5, 1.0)} < set(bs) and bs == sorted(bs)
    # the refinement brackets the best grid point: the best is never worse than the grid's best
    grid_best = min(c.regret_mean for c in res.candidates if c.b in grid)
    assert res.best.regret_mean <= grid_best
    for cand in res.candidates:
        assert cand.mu <= 1.0 and cand.c >= 1.0 and cand.on_frontier
    # same seed for every candidate: each row is exactly simulate(GaussianTS(b, c), seed)
    pick = res.candidates[4]
    direct = simulate(GaussianTS(b=pick.b, c=pick.c), env, 10_000, 5, 3, progress=False)
    assert pick.regret_mean == pytest.approx(direct.final("pseudo"))
    # the findings of Ou, Avella Medina & Cummings (2024), reduced scale: b = 0 does not converge,
    # the best b is intermediate
    best, b0 = res.best, res.candidates[0]
    assert 0 < best.b < bs[-1]
    diff, se = res.paired_difference(0, best.b)
    assert diff > 10 * se and b0.regret_mean > 2 * best.regret_mean
    assert b0.late_slope > 0.15 > 0.05 > best.late_slope  # uniform play costs the mean gap 0.25
    d = json.loads(json.dumps(res.to_dict()))
    assert d["best"]["b"] == best.b and len(d["candidates"]) == len(bs)
    assert {"b", "c", "mu", "regret_mean", "regret_stderr"} <= set(d["candidates"][0])
    assert "| b |" in res.table()
    path = tmp_path / "tune.png"
    plot_tuning(res, str(path))
    assert path.stat().st_size > 10_000


@pytest.mark.slow
def test_tuner_batch_is_bit_identical_to_separate_simulations():
    env = parse_env(SPEC)
    kw = dict(target_mu=1.0, reps=3, seed=5, progress=False)
    batched = tune_thompson(env, 8000, **kw)
    separate = tune_thompson(env, 8000, batch=False, **kw)
    assert batched.table() == separate.table()
    assert [c.to_dict() for c in batched.candidates] == [c.to_dict() for c in separate.candidates]
    for a, b in zip(batched.simulations, separate.simulations):
        assert np.array_equal(a.pseudo_regret, b.pseudo_regret)
        assert np.array_equal(a.empirical_regret, b.empirical_regret)
        assert np.array_equal(a.pulls, b.pulls)


@pytest.mark.slow
def test_tuner_best_depends_on_budget():
    env = parse_env(SPEC)
    lo = tune_thompson(env, 10_000, target_mu=1.0, reps=3, progress=False, prepulls=[3, 10, 30, 100, 300])
    hi = tune_thompson(env, 10_000, target_mu=5.0, reps=3, progress=False, prepulls=[3, 10, 30, 100, 300])
    assert hi.best.b < lo.best.b  # a larger budget needs fewer pre-pulls
    assert hi.best.regret_mean < lo.best.regret_mean


def test_tuner_rejects_bad_input():
    env = parse_env(SPEC)
    with pytest.raises(ValueError, match="reps"):
        tune_thompson(env, 1000, target_mu=1.0, reps=0, progress=False)
    with pytest.raises(ValueError, match="prepulls"):
        tune_thompson(env, 1000, target_mu=1.0, prepulls=[-1], progress=False)
    with pytest.raises(ValueError, match="prepulls"):
        tune_thompson(env, 1000, target_mu=1.0, prepulls=[500], progress=False)


