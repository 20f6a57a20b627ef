"""Run report (bandits.report) and (b, c) tuner (bandits.tuner) at reduced scale."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from bandits import GaussianTS, parse_env, simulate
from bandits.report import plot_run, run_thompson
from bandits.tuner import (
    budget_pair,
    candidate_prepulls,
    frontier_c,
    max_prepulls,
    plot_tuning,
    resolve_target_mu,
    rule_of_thumb_prepulls,
    tune_thompson,
)
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.conversions import gdp_epsilon, gdp_mu
from dpaudit.thompson import ThompsonConfig

SPEC = "bernoulli:0.75,0.625,0.5,0.375,0.25"


class FakeAuditor:
    """Stands in for bandits.audit.audit_thompson: records its calls, returns a fixed verdict."""

    def __init__(self, mu_lower: float = 0.3) -> None:
        self.calls: list[tuple[tuple, dict]] = []
        self.mu_lower = mu_lower

    def __call__(self, policy, horizon, arms, **kw):
        self.calls.append(((policy, horizon, arms), kw))
        cfg = ThompsonConfig(horizon, arms, policy.b, policy.c)
        delta = kw["delta"]
        return AuditReport.build(
            target="thompson",
            certified=Certified(
                mu=cfg.mu_tight, epsilon=float(gdp_epsilon(cfg.mu_tight, delta)), delta=delta
            ),
            empirical=Empirical(
                epsilon_lower=0.1,
                mu_lower=self.mu_lower,
                delta=delta,
                confidence=kw["confidence"],
                trials=kw["trials"],
                method="fake",
                statistic="fake",
            ),
        )


# ---------------------------------------------------------------------------------------------- report


def test_run_report_regret_privacy_and_reduced_horizon_audit():
    fake = FakeAuditor()
    rep = run_thompson(
        SPEC,
        3000,
        reps=3,
        prepulls=20,
        variance_scale=5.0,
        audit_trials=50,
        seed=4,
        delta=1e-5,
        progress=False,
        audit_horizon=400,
        auditor=fake,
    )
    # regret equals a direct simulation with the same seed (common random numbers, no hidden state)
    sim = simulate(GaussianTS(b=20, c=5.0), parse_env(SPEC), 3000, 3, 4, progress=False)
    assert rep.regret["mean"] == pytest.approx(sim.final("pseudo"))
    assert rep.regret["empirical_mean"] == pytest.approx(sim.final("empirical"))
    assert rep.regret["checkpoints"]["t"] == sim.checkpoints.tolist()
    assert len(rep.regret["checkpoints"]["pseudo_mean"]) == sim.checkpoints.size
    # privacy: the tight certified count and the best certified epsilon at delta
    cfg = ThompsonConfig(3000, 5, 20, 5.0)
    assert rep.privacy["mu"] == cfg.mu_tight
    assert rep.privacy["mu"] == pytest.approx(math.sqrt((3000 - 100) / (5.0 * 21)))
    assert rep.privacy["mu_paper"] == pytest.approx(math.sqrt(3000 / (5.0 * 21)))
    assert rep.privacy["epsilon"] <= float(gdp_epsilon(cfg.mu_tight, 1e-5)) * (1 + 1e-9)
    assert rep.privacy["epsilon"] == min(
        v for k, v in rep.privacy["bounds"].items() if not k.startswith("paper") and v is not None
    )
    assert {"gdp", "rdp", "pld", "paper", "paper_rdp", "paper_standard"} <= set(rep.privacy["bounds"])
    # the audit: called once with the same (b, c) at the reduced horizon, and says so
    assert len(fake.calls) == 1
    (policy, horizon, arms), kw = fake.calls[0]
    assert (policy.b, policy.c, horizon, arms) == (20, 5.0, 400, 5)
    assert kw["trials"] == 50 and kw["delta"] == 1e-5 and kw["seed"] == 4
    assert rep.audit["verdict"] == "consistent"
    assert rep.audit["horizon"] == 400 and "reduced horizon T = 400" in rep.audit["note"]
    assert rep.audit["certified"]["mu"] == pytest.approx(ThompsonConfig(400, 5, 20, 5.0).mu_tight)
    d = json.loads(json.dumps(rep.to_dict()))
    assert set(d) == {"regret", "privacy", "audit", "config", "timing"}
    assert d["config"]["audit_horizon"] == 400
    text = rep.summary()
    assert "CONSISTENT" in text and "T = 400" in text


def test_run_report_skips_audit_with_zero_trials_and_reports_violation():
    def boom(*a, **k):
        raise AssertionError("the auditor must not be called")

    rep = run_thompson("truncexp:0.1,1", 500, reps=2, audit_trials=0, progress=False, auditor=boom)
    assert rep.audit is None and "skipped" in rep.summary()
    bad = run_thompson(
        "bernoulli:0.6,0.4", 500, reps=2, audit_trials=10, progress=False, auditor=FakeAuditor(mu_lower=1e6)
    )
    assert bad.audit["verdict"] == "violated" and "VIOLATED" in bad.summary()
    assert "audited the run's configuration" in bad.audit["note"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"variance_scale": 0.5}, "variance_scale"),
        ({"prepulls": 250}, "prepulls"),
        ({"reps": 0}, "reps"),
        ({"reps": -3}, "reps"),
        ({"audit_trials": -1}, "audit_trials"),
    ],
)
def test_run_report_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_thompson("bernoulli:0.6,0.4", 500, progress=False, **kwargs)


def test_run_report_rejects_bad_env():
    with pytest.raises(ValueError, match="spec"):
        run_thompson("gauss:0.5", 100, progress=False)


def test_plot_run_writes_png(tmp_path):
    rep = run_thompson("bernoulli:0.6,0.4", 300, reps=2, progress=False)
    path = tmp_path / "run.png"
    plot_run(rep, str(path))
    assert path.stat().st_size > 5_000


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


def test_tuner_common_random_numbers_and_reduced_scale_findings(tmp_path):
    env = parse_env(SPEC)
    res = tune_thompson(env, 10_000, target_mu=1.0, reps=5, seed=3, progress=False)
    bs = [c.b for c in res.candidates]
    assert bs == candidate_prepulls(10_000, 5, 1.0)
    for cand in res.candidates:
        assert cand.mu <= 1.0 and cand.c >= 1.0 and cand.on_frontier
    # same seed for every candidate: each row is exactly simulate(GaussianTS(b, c), seed)
    pick = res.candidates[4]
    direct = simulate(GaussianTS(b=pick.b, c=pick.c), env, 10_000, 5, 3, progress=False)
    assert pick.regret_mean == pytest.approx(direct.final("pseudo"))
    # seed 004's findings, reduced scale: b = 0 does not converge, the best b is intermediate
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


def test_run_report_with_the_real_audit():
    rep = run_thompson(
        "bernoulli:0.75,0.25",
        300,
        reps=2,
        prepulls=1,
        variance_scale=1.0,
        audit_trials=400,
        audit_horizon=40,
        progress=False,
    )
    a = rep.audit
    assert a["verdict"] == "consistent"
    assert a["certified"]["mu"] == pytest.approx(ThompsonConfig(40, 2, 1, 1.0).mu_tight)
    assert 0 <= a["empirical"]["mu_lower"] <= a["certified"]["mu"]
    assert a["details"]["b"] == 1 and a["details"]["horizon"] == 40
    assert json.loads(json.dumps(rep.to_dict(), default=float))["audit"]["horizon"] == 40
