"""The floor of Thompson sampling's outputs view measured on the algorithm
(:mod:`bandits.thompson.outputs_floor`): the estimate against the view it describes (its pilot,
its choice and its certification run on fresh trajectories of the scaled agent), the
fixed-design path, and the audit's report."""

from __future__ import annotations

import numpy as np
import pytest

from bandits import GaussianTS, parse_env
from bandits.auditing.contract import AuditSettings
from bandits.thompson import audit as ts_audit
from bandits.thompson.audit import audit_thompson
from bandits.thompson.audit_pilot import choose, pilot_plan, pilot_sample
from bandits.thompson.audit_trajectories import _policy_block, sample_stage
from bandits.thompson.outputs_floor import RUNS_PER_TRIAL, outputs_leak_floor
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.leak_floor import LeakFloor
from dpaudit.audit.thresholds import single_test_rates

POLICY = GaussianTS(b=1, c=1.0)
T, ARMS, CONF = 40, 2, 0.975
MU = ThompsonConfig(T, ARMS, 1, 1.0).mu_tight


def _outputs_bound(leak: float, plan: tuple, seed: int) -> float:
    """The outputs view's μ lower bound on the agent with its posterior noise scaled by 1/``leak``:
    the view's own pilot and choice, then its certification on a fresh main sample."""
    designs, n_pilot, n_main = plan
    pilots = [pilot_sample(POLICY, nb, d, T, ARMS, n_pilot, stage=0, seed=seed, executor=None, progress=False,
                           desc="", noise_factor=1.0 / leak) for d, nb in enumerate(designs)]  # fmt: skip
    c = choose(pilots, ARMS, n_main, CONF, MU)
    tables = designs[c["design"]].tables(POLICY, T, ARMS)
    main = sample_stage(_policy_block, (POLICY, tables, T), (n_main, POLICY.c, False, 1.0 / leak), 1,
                        c["design"], n_main, seed, None, False, "")  # fmt: skip
    st = c["statistic"]
    rates = single_test_rates(main[0][st], main[1][st], c["threshold"], c["orientation"], confidence=CONF)
    return rates.mu_lower_bound().mu


@pytest.mark.slow
def test_the_floor_predicts_how_often_the_view_sees_the_scaled_agent():
    """At the measured factors the view, run on 40 fresh seeds of the scaled agent, detects
    (bound > 0) and refutes the certificate (bound > μ) about half of the time (50 % ± 20 points,
    2.5 standard errors)."""
    plan = pilot_plan(ARMS, 1000, 0.1, None)
    f = outputs_leak_floor(POLICY, T, ARMS, plan, seed=0, confidence=CONF, mu_certified=MU)
    assert f.has_power and f.detect_leak is not None and f.violate_leak is not None
    assert 0.05 < f.detect_leak < 1.0 < f.violate_leak < 16.0
    evaluated = sorted(p.leak for p in f.points)
    assert evaluated[0] < f.detect_leak  # an interpolated crossing, not the smallest factor tried
    det = sum(_outputs_bound(f.detect_leak, plan, s) > 0.0 for s in range(1, 41))
    vio = sum(_outputs_bound(f.violate_leak, plan, s) > MU for s in range(1, 41))
    assert 12 <= det <= 28 and 12 <= vio <= 28, (det, vio)


def test_with_one_design_the_threshold_comes_from_model_pools_the_leak_does_not_change():
    plan = pilot_plan(ARMS, 300, 0.1, None)
    assert len(plan[0]) == 1 and plan[1] == 0
    f = outputs_leak_floor(POLICY, T, ARMS, plan, seed=0, confidence=CONF, mu_certified=MU, model_trials=200,
                           replicates=8)  # fmt: skip
    detected = [p.detected for p in sorted(f.points, key=lambda p: p.leak)]
    # the leak moves the main sample, not the threshold: detection grows with L
    assert np.all(np.diff(detected) > -1e-9) and detected[-1] > 0.5 > detected[0]
    assert f.violate_leak is not None and f.violate_leak > 1.0


@pytest.mark.slow
def test_the_audit_reports_the_measured_floor_of_both_views():
    settings = AuditSettings(trials=1000, floor="algorithm")
    audit = audit_thompson(POLICY, T, parse_env("bernoulli:0.5,0.5"), settings)
    out = audit.primary
    assert out.floor is None and out.details["algorithm_floor"]["family"].startswith("every posterior noise")
    assert out.details["detection_floor"].startswith("measured on this algorithm (every posterior noise")
    assert out.verdict.value == "consistent" and out.details["seconds"]["floor"] > 0
    draws = audit.components["releases"]
    assert "algorithm_floor" in draws.details and "reference" not in draws.details["detection_floor"]
    assert draws.details["detection_floor"].startswith("measured on this algorithm (every posterior noise")
    assert draws.verdict.value == "consistent" and draws.details["seconds"]["floor"] > 0
    # the same measurement is found again by the default (auto) floor: kept on disk, at no cost
    again = audit_thompson(POLICY, T, parse_env("bernoulli:0.5,0.5"), AuditSettings(trials=1000))
    assert again.primary.details["algorithm_floor"] == out.details["algorithm_floor"]
    assert again.primary.details["algorithm_floor_kept"]["where"] == "disk"
    assert "floor" not in again.primary.details["seconds"]  # nothing measured


@pytest.mark.parametrize("detect, verdict", [(0.5, "consistent"), (3.0, "inconclusive")])
def test_an_outputs_view_without_power_on_the_algorithm_is_inconclusive(monkeypatch, detect, verdict):
    floor = LeakFloor(detect, 8.0, (), 64, "every posterior noise draw scaled by 1/L", "mu", MU)
    monkeypatch.setattr(ts_audit, "outputs_leak_floor", lambda *a, **k: floor)
    monkeypatch.setattr(ts_audit, "draws_leak_floor", lambda *a, **k: floor)  # not under test here
    settings = AuditSettings(trials=2000, floor="algorithm")
    audit = audit_thompson(POLICY, T, parse_env("bernoulli:0.5,0.5"), settings)
    assert audit.primary.verdict.value == verdict
    assert audit.primary.details["algorithm_floor"]["detect_leak"] == detect


def test_the_floors_are_seeded_from_the_floor_seed_and_the_releases_floor_keys_the_chosen_design(monkeypatch):
    """Both floors take ``floor_seed``, whatever the audit's seed (one kept floor serves every seed);
    the releases floor is measured on the design the audit's pilot chose, which depends on the
    audit's seed, so that design is part of its key."""
    floor = LeakFloor(0.5, 8.0, (), 64, "every posterior noise draw scaled by 1/L", "mu", MU)
    seeds: list[int] = []
    configs: dict[str, list] = {}
    real = ts_audit.algorithm_floor
    monkeypatch.setattr(ts_audit, "outputs_leak_floor", lambda *a, **k: seeds.append(k["seed"]) or floor)
    monkeypatch.setattr(ts_audit, "draws_leak_floor", lambda *a, **k: seeds.append(k["seed"]) or floor)

    def recorded(view, s, config, measure):
        configs[view] = config
        return real(view, s, config, measure)

    monkeypatch.setattr(ts_audit, "algorithm_floor", recorded)
    for seed, floor_seed in [(5, 0), (5, 9)]:
        settings = AuditSettings(trials=2000, seed=seed, floor="algorithm", floor_seed=floor_seed)
        audit = audit_thompson(POLICY, T, parse_env("bernoulli:0.5,0.5"), settings)
    assert seeds == [0, 0, 9, 9]
    chosen = configs["releases (posterior draws)"][-1]
    assert chosen.describe() == audit.primary.details["neighbour"]["description"]
    assert len(configs["outputs"]) == 4  # policy, horizon, environment, options: no design


def test_the_cli_knows_the_floors_cost():
    from bandits.registry import get
    from bandits.thompson.draws_floor import RUNS_PER_TRIAL as DRAWS

    assert get("ts").floor_runs_per_trial == RUNS_PER_TRIAL + DRAWS
    assert np.isclose(RUNS_PER_TRIAL, 360)
