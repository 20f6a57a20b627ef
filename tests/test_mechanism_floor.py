"""Floors measured on a mechanism component's own mechanism (issue 20, item 3):
:mod:`bandits.auditing.mechanism_floor` for the audits that call ``run_audit`` on a mechanism (the
semi-bandit randomizers and tree), and the matroid initialisation release's floor measured on the
agent (:func:`bandits.matroid.audit.init_release_leak_floor`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from bandits.auditing.contract import AuditSettings
from bandits.auditing.mechanism_floor import (
    MECHANISM_FAMILY,
    NoiseScaledMechanism,
    NotScalable,
    ScaledDraws,
    mechanism_leak_floor,
    with_measured_floor,
)
from bandits.auditing.replicated_floor import REPLICATED_FAMILY
from bandits.environments.grammar import parse_combinatorial_env
from bandits.matroid.audit import audit_init_release, init_release_leak_floor
from bandits.matroid.policies import DPTSMat
from bandits.semibandits.audit import audit_csb_policy, ldp_target
from bandits.semibandits.policies import CUCBLDP2
from dpaudit.audit import AuditReport, Certified, Empirical
from dpaudit.audit.leak_floor import LeakFloor, LeakPoint
from dpaudit.audit.neighbours import NeighbourPair
from dpaudit.audit.runner import AuditTarget, choose_statistic, run_audit
from mechanisms.laplace import LaplaceMechanism
from mechanisms.randomized_response import RandomizedResponse

MATROID_ENV = "matroid-uniform:k=2,means=0.9x2/0.5x4"
CSB_ENV = "topk:k=2,means=0.5x4/0.7x2,reward=min"


@pytest.mark.parametrize("factor", [0.5, 3.0])
def test_scaled_draws_scale_the_noise_where_it_is_drawn_and_pass_the_rest(factor):
    plain, scaled = np.random.default_rng(5), ScaledDraws(np.random.PCG64(5), factor)
    np.testing.assert_allclose(scaled.laplace(1.0, 2.0, 7), 1.0 + factor * (plain.laplace(1.0, 2.0, 7) - 1.0),
                               rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(scaled.normal(-1.0, 0.5, 5),
                               -1.0 + factor * (plain.normal(-1.0, 0.5, 5) + 1.0), rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(scaled.standard_normal(4), factor * plain.standard_normal(4), rtol=1e-12)
    buf = np.empty(3)
    assert scaled.standard_normal(out=buf) is buf
    np.testing.assert_allclose(buf, factor * plain.standard_normal(3), rtol=1e-12)
    np.testing.assert_array_equal(scaled.random(6), plain.random(6))  # not noise: the plain draw
    assert scaled.scaled_draws == 4 and isinstance(scaled, np.random.Generator)


def test_factor_one_is_the_mechanism_and_a_mechanism_without_such_noise_has_no_family():
    lap = LaplaceMechanism(scale=2.0, sensitivity=1.0)
    same = NoiseScaledMechanism(lap, 1.0).sample(np.zeros(1), np.random.default_rng(9), size=50)
    np.testing.assert_array_equal(same, lap.sample(np.zeros(1), np.random.default_rng(9), size=50))
    rr = NoiseScaledMechanism(RandomizedResponse(epsilon=1.0), 0.5)
    with pytest.raises(NotScalable, match="drew no Laplace or normal noise"):
        rr.sample(0, np.random.default_rng(0), size=10)


def _laplace_target(epsilon: float = 1.0) -> AuditTarget:
    mech = LaplaceMechanism(scale=1.0 / epsilon, sensitivity=1.0)
    pair = NeighbourPair((0.0,), (1.0,), "replace", "0 vs 1", epsilon)
    cert = Certified(epsilon=epsilon, delta=1e-6)
    return AuditTarget("laplace", mech, pair, choose_statistic(mech, pair), cert, 1e-6, reference="laplace")


def test_the_floor_of_a_laplace_audit_is_where_its_replicated_audits_cross_half():
    target = _laplace_target()
    f = mechanism_leak_floor(target, trials=20_000, confidence=0.95, batch_size=1 << 14, replicates=12)
    assert f.family == MECHANISM_FAMILY and f.quantity == "epsilon" and f.certified == 1.0
    assert f.has_power and 1.0 < f.violate_leak < 1.6
    # independent check at a factor well above the measured one: the audit refutes in most seeds
    leak = 1.3 * f.violate_leak
    scaled = AuditTarget(target.name, NoiseScaledMechanism(target.mechanism, 1.0 / leak), target.pair,
                         target.statistic, target.certified, target.delta, reference="laplace")  # fmt: skip
    refuted = [run_audit(scaled, trials=20_000, seed=100 + s, confidence=0.95).verdict == "violated"
               for s in range(8)]  # fmt: skip
    assert sum(refuted) >= 6
    again = mechanism_leak_floor(target, trials=20_000, confidence=0.95, batch_size=1 << 14, replicates=12)
    assert again == f  # a deterministic function of the configuration and the floor seed


def _report(epsilon_lower: float) -> AuditReport:
    emp = Empirical(epsilon_lower=epsilon_lower, mu_lower=None, delta=1e-6, confidence=0.95, trials=100,
                    method="m", statistic="s")  # fmt: skip
    return AuditReport.build(target="t", certified=Certified(epsilon=1.0, delta=1e-6), empirical=emp,
                             details={"detection_floor": "reference text"})  # fmt: skip


def test_a_measured_floor_replaces_the_reference_and_decides_the_power():
    blind = LeakFloor(2.0, 9.0, (LeakPoint(1.0, 0.2, 0.0), LeakPoint(2.0, 0.5, 0.0)), 8, MECHANISM_FAMILY,
                      "epsilon", 1.0)  # fmt: skip
    seeing = LeakFloor(0.3, 1.2, (LeakPoint(1.0, 0.9, 0.0),), 8, MECHANISM_FAMILY, "epsilon", 1.0)
    r = _report(0.4)
    assert r.verdict == "consistent" and with_measured_floor(r, None, None) is r
    out = with_measured_floor(r, blind, {"where": "shipped", "cpu_seconds": 3.0})
    assert out.verdict == "inconclusive" and out.floor is None
    assert out.details["reference_floor"] == "reference text"
    assert out.details["detection_floor"] == blind.describe()
    assert out.details["algorithm_floor"] == blind.to_dict()
    assert out.details["algorithm_floor_kept"]["where"] == "shipped"
    assert with_measured_floor(r, seeing, None).verdict == "consistent"
    assert with_measured_floor(_report(1.5), blind, None).verdict == "violated"  # a refutation stands


def test_the_semibandit_randomizer_measures_its_floor_and_keeps_it(monkeypatch):
    import bandits.semibandits.audit as csb

    env = parse_combinatorial_env(CSB_ENV)
    calls = []

    def measure(target, **kw):
        calls.append(kw)
        return mechanism_leak_floor(target, **{**kw, "replicates": 4})

    monkeypatch.setattr(csb, "mechanism_leak_floor", measure)
    black_box = csb.audit_policy  # its own floor is tested elsewhere (tests/test_leak_floor.py)
    monkeypatch.setattr(csb, "audit_policy",
                        lambda p, T, e, st: black_box(p, T, e, replace(st, floor="reference")))  # fmt: skip
    pol = CUCBLDP2(epsilon=1.0)
    s = AuditSettings(trials=100, floor="algorithm")
    first = audit_csb_policy(pol, 8, env, s, mechanism_trials=4000)
    assert len(calls) == 1 and calls[0]["trials"] == 4000 and calls[0]["replicates"] == 64
    floor = first.primary.details["algorithm_floor"]
    assert floor["family"] == MECHANISM_FAMILY and first.floor == first.primary.details["detection_floor"]
    assert "reference_floor" in first.primary.details
    kept = audit_csb_policy(pol, 8, env, AuditSettings(trials=100), mechanism_trials=4000)
    assert len(calls) == 1  # not measured again: kept
    assert kept.primary.details["algorithm_floor"] == floor
    assert kept.primary.details["algorithm_floor_kept"]["where"] == "disk"
    ref = AuditSettings(trials=100, floor="reference")
    reference = audit_csb_policy(pol, 8, env, ref, mechanism_trials=4000)
    assert "algorithm_floor" not in reference.primary.details
    # the mechanism's own audit is untouched by the floor: the same bounds in all three
    assert first.primary.empirical == kept.primary.empirical == reference.primary.empirical
    assert ldp_target(pol, env, delta=s.delta).name == first.primary.target


def test_the_matroid_initialisation_floor_is_measured_on_the_noise_scaled_agent(monkeypatch):
    import bandits.matroid.audit as mat

    env = parse_combinatorial_env(MATROID_ENV)
    pol = DPTSMat(epsilon=2.0)
    f = init_release_leak_floor(pol, env, trials=400, confidence=0.95, delta=1e-6, replicates=3)
    assert f.family == REPLICATED_FAMILY and f.quantity == "epsilon"
    assert f.detect_leak is not None and f.detect_leak <= 1.0  # 400 releases per side see the leak
    seen = []
    monkeypatch.setattr(mat, "init_release_leak_floor", lambda *a, **kw: seen.append(kw) or f)
    own, pub = audit_init_release(pol, env, trials=400, settings=AuditSettings(trials=100, floor="algorithm"))
    plain, _ = audit_init_release(pol, env, trials=400)
    assert seen and seen[0]["trials"] == 400 and own.details["algorithm_floor"] == f.to_dict()
    assert own.empirical == plain.empirical and "algorithm_floor" not in plain.details
    assert pub is None or pub.details["algorithm_floor"] == f.to_dict()
    kept, _ = audit_init_release(pol, env, trials=400, settings=AuditSettings(trials=100))
    assert len(seen) == 1 and kept.details["algorithm_floor_kept"]["where"] == "disk"


def test_the_cascade_audits_measure_their_floors_by_replicating_themselves(monkeypatch):
    import bandits.auditing.replicated_floor as rf
    from bandits.cascading.audit import audit_cascade_policy
    from bandits.registry import get

    spec = get("cascade-ldp-laplace-sound")
    env = spec.env_parser(spec.default_env)
    pol = spec.configure({}, env, 100).policy
    whole = rf.replicated_leak_floor
    calls = []

    def fewer(bound, policy, quantity, certified, **kw):
        calls.append(kw)
        return whole(bound, policy, quantity, certified, **{**kw, "replicates": 3})

    monkeypatch.setattr(rf, "replicated_leak_floor", fewer)
    measured = audit_cascade_policy(pol, 2, env, AuditSettings(trials=300, floor="algorithm"))
    floor = measured.primary.details["algorithm_floor"]
    assert len(calls) == 1 and floor["family"] == rf.REPLICATED_FAMILY and floor["replicates"] == 3
    assert measured.floor == measured.primary.details["detection_floor"]
    plain = audit_cascade_policy(pol, 2, env, AuditSettings(trials=300, floor="reference"))
    assert plain.primary.empirical == measured.primary.empirical  # the floor's runs are seeded apart
    kept = audit_cascade_policy(pol, 2, env, AuditSettings(trials=300, seed=5))
    assert len(calls) == 1 and kept.primary.details["algorithm_floor"] == floor
    assert kept.primary.details["algorithm_floor_kept"]["where"] == "disk"
