"""The audit floor measured on an algorithm's own noise-scaled runs (issue 20, item 3):
the search of :mod:`dpaudit.audit.leak_floor` on known curves, the noise-scaled variant of a
policy (:class:`bandits.auditing.leak_floor.NoiseScaled`), and the floor of a real audit."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from bandits.auditing.black_box import audit_policy, black_box_leak_floor
from bandits.auditing.contract import AuditSettings
from bandits.auditing.leak_floor import NoiseScaled
from bandits.engine.simulator import simulate
from bandits.environments import parse_env
from bandits.lazy.policies import LazyUCB
from bandits.references.policies import UCB1
from benchmarks.planted_bug_tools import scaled_stream
from dpaudit.audit.leak_floor import LEAK_RANGE, leak_floor
from mechanisms.randomness import RepRandom, ScaledRandom


def _curves(det_at: float, vio_at: float, slope: float):
    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([norm.cdf(slope * math.log(leak / det_at))]),
                np.array([norm.cdf(slope * math.log(leak / vio_at))]))  # fmt: skip

    return evaluate


@settings(max_examples=60, deadline=None)
@given(
    det=st.floats(0.07, 20.0),
    gap=st.floats(1.05, 3.0),
    slope=st.floats(1.5, 8.0),
)
def test_search_recovers_probit_crossings(det, gap, slope):
    """On probit curves in log L (the shape the search interpolates) both crossings are found to
    within 2 %, whatever their place in the search range and their steepness."""
    vio = min(det * gap, 60.0)
    f = leak_floor(_curves(det, vio, slope), replicates=1)
    assert f.detect_leak == pytest.approx(det, rel=0.02)
    assert f.violate_leak == pytest.approx(vio, rel=0.02)
    assert len(f.points) <= 7
    assert f.has_power == (f.detect_leak <= 1.0)


def test_search_limits_are_stated():
    """A crossing beyond the range is None (no power: the certificate is never refuted); one below
    the smallest factor is reported as that factor (an upper bound)."""
    never = leak_floor(lambda L: (np.zeros(3), np.zeros(3)), replicates=3)
    assert never.detect_leak is None and never.violate_leak is None and not never.has_power
    assert max(p.leak for p in never.points) == LEAK_RANGE[1]
    always = leak_floor(lambda L: (np.ones(2), np.ones(2)), replicates=2)
    assert always.detect_leak == LEAK_RANGE[0] and always.violate_leak == LEAK_RANGE[0]
    assert always.has_power
    text = json.dumps(never.to_dict(), allow_nan=False)
    assert '"detect_leak": null' in text
    assert "not reached up to L = 64" in never.describe()


def test_scaled_random_scales_noise_only():
    seeds = [np.random.SeedSequence(3, spawn_key=(r,)) for r in range(2)]
    plain, half = RepRandom(seeds), ScaledRandom(seeds, 0.5)
    assert np.allclose(half.laplace((4,)), RepRandom(seeds).laplace((4,)) / 2)
    assert np.array_equal(ScaledRandom(seeds, 0.5).random((4,)), plain.random((4,)))  # uniforms unchanged
    assert np.allclose(half.child(2).standard_normal((3,)), plain.child(2).standard_normal((3,)) / 2)
    with pytest.raises(ValueError, match="factor"):
        ScaledRandom(seeds, 0.0)


def test_noise_scaled_policy_is_the_policy_at_factor_one():
    env = parse_env("bernoulli:0.6,0.5,0.4")
    pol = LazyUCB(epsilon=1.0)
    a = simulate(pol, env, 300, 6, seed=4, record_actions=True, progress=False, transcripts=True)
    b = simulate(NoiseScaled(pol, 1.0), env, 300, 6, seed=4, record_actions=True, progress=False,
                 transcripts=True)  # fmt: skip
    assert np.array_equal(a.actions, b.actions)
    c = simulate(NoiseScaled(pol, 0.5), env, 300, 6, seed=4, record_actions=True, progress=False,
                 transcripts=True)  # fmt: skip
    key = next(iter(a.transcripts))
    assert not np.array_equal(a.transcripts[key], c.transcripts[key])
    assert NoiseScaled(pol, 0.5).declare(300, 3) == pol.declare(300, 3)


def test_noise_scaled_matches_the_planted_bug():
    """The wrapper and the planted "noise x1/2" bug (which patches the policy class) run the same
    code: identical actions on the same seeds."""
    env = parse_env("bernoulli:0.6,0.5,0.4")
    pol = LazyUCB(epsilon=1.0)
    wrapped = simulate(NoiseScaled(pol, 0.5), env, 200, 5, seed=1, record_actions=True, progress=False)
    with scaled_stream(LazyUCB, 0.5)():
        planted = simulate(pol, env, 200, 5, seed=1, record_actions=True, progress=False)
    assert np.array_equal(wrapped.actions, planted.actions)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_bad_inputs_name_the_parameter(bad):
    with pytest.raises(ValueError, match="factor"):
        NoiseScaled(LazyUCB(epsilon=1.0), bad)
    with pytest.raises(ValueError, match="floor"):
        AuditSettings(trials=100, floor="oracle")
    with pytest.raises(ValueError, match="declares no privacy"):
        black_box_leak_floor(UCB1(), 6, "bernoulli:0.5,0.5", AuditSettings(trials=200), replicates=2)


@pytest.mark.slow
def test_floor_of_a_real_audit():
    """Lazy-UCB at ε = 1, T = 4 on two arms, 600 runs per side: the declared algorithm is seen
    (detected at L < 1), the certificate is not refuted at L = 1 (violation needs L > 1) and a
    noise-scale bug of 10x is refuted; the audit reports the floor and keeps its verdict."""
    pol, env = LazyUCB(epsilon=1.0), parse_env("bernoulli:0.5,0.5")
    rep = audit_policy(pol, 4, env, AuditSettings(trials=600, seed=2, floor="algorithm"))
    f = rep.details["algorithm_floor"]
    assert f == json.loads(json.dumps(f, allow_nan=False))
    assert f["detect_leak"] < 1.0
    assert f["violate_leak"] is not None and 1.0 < f["violate_leak"] < 10.0
    at_one = next(p for p in f["points"] if p[0] == 1.0)
    assert at_one[2] < 0.5 <= at_one[1]
    assert rep.details["detection_floor"].startswith("measured on this algorithm")
    assert rep.verdict.value == "consistent"
    assert rep.floor is None  # the reference floor does not decide


@pytest.mark.slow
def test_no_power_is_inconclusive_where_the_reference_floor_says_consistent():
    """Lazy-UCB at ε = 0.3 with 300 runs per side proves ε ≥ 0: the reference floor (one oracle
    test, ε ≥ 0.23 seen half the time) would let that pass as ``consistent``, and only the pilot's
    zero prediction makes it ``inconclusive``; measured on the algorithm, a positive bound needs the
    noise scaled down by L ≈ 1.8, so the audit could not have seen the leak the certificate
    allows: ``inconclusive``."""
    pol, env = LazyUCB(epsilon=0.3), parse_env("bernoulli:0.5,0.5")
    reference = audit_policy(pol, 4, env, AuditSettings(trials=300, seed=1))
    assert reference.empirical.epsilon_lower == 0.0 and not reference.floor.below(None, 0.3)
    assert reference.verdict.value == "inconclusive" and reference.details["no_power"]
    rep = audit_policy(pol, 4, env, AuditSettings(trials=300, seed=1, floor="algorithm"))
    assert rep.details["algorithm_floor"]["detect_leak"] > 1.2
    assert rep.verdict.value == "inconclusive"


@pytest.mark.slow
def test_releases_floor_sees_the_declared_algorithm():
    """The releases view of Lazy-UCB (ε = 1, T = 4, 2 arms, 600 runs per side): its statistics see
    the declared algorithm (detected at L < 1), do not refute it at L = 1, and refute a noise-scale
    bug of 10x; the releases report carries its own measured floor."""
    from bandits.auditing.releases import audit_releases, releases_leak_floor

    pol, env = LazyUCB(epsilon=1.0), parse_env("bernoulli:0.5,0.5")
    s = AuditSettings(trials=600, seed=3, floor="algorithm")
    f = releases_leak_floor(pol, 4, env, s, replicates=16, pool_pilots=4)
    assert f.has_power and f.detect_leak < 1.0
    assert f.violate_leak is not None and 1.0 < f.violate_leak < 10.0
    with pytest.raises(ValueError, match="pool_pilots"):
        releases_leak_floor(pol, 4, env, s, pool_pilots=0)
    rep = audit_releases(pol, 4, env, AuditSettings(trials=600, seed=3))
    assert "algorithm_floor" not in rep.details  # the reference floor unless asked


@pytest.mark.slow
def test_views_say_which_floor_decided(monkeypatch):
    """With ``floor="algorithm"`` both views of a black-box-audited algorithm measure their floors
    (stubbed here with a fixed floor: the search is tested above) and the report says so; a view
    without one is named."""
    import bandits.auditing.black_box as bb
    import bandits.auditing.releases as rel
    from bandits.auditing.black_box import black_box_audit
    from bandits.auditing.views import REFERENCE_NOTE, audit_views
    from dpaudit.audit.leak_floor import LeakFloor, LeakPoint

    fixed = LeakFloor(0.3, 1.3, (LeakPoint(1.0, 0.9, 0.1),), 4, "stub", "epsilon", 1.0)
    monkeypatch.setattr(bb, "black_box_leak_floor", lambda *a, **k: fixed)
    monkeypatch.setattr(rel, "releases_leak_floor", lambda *a, **k: fixed)
    env = parse_env("bernoulli:0.5,0.5")
    audit = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env,
                        AuditSettings(trials=400, floor="algorithm"))  # fmt: skip
    d = audit.to_dict()
    assert d["details"]["floor_note"] == "floors measured on this algorithm: outputs, releases"
    assert d["details"]["components"]["releases"]["details"]["algorithm_floor"]["violate_leak"] == 1.3
    text = str(audit)
    assert "its floor, measured on this algorithm" in text and "floors measured on this algorithm" in text
    plain = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env,
                        AuditSettings(trials=400, floor="reference"))  # fmt: skip
    assert plain.to_dict()["details"]["floor_note"] == REFERENCE_NOTE  # said, not implied
    assert "(reference floor: this procedure on a reference pair, not on this algorithm" in str(plain)
    # the default ("auto") takes the floors just measured at this configuration, and says where from
    monkeypatch.setattr(bb, "black_box_leak_floor", lambda *a, **k: pytest.fail("measured again"))
    auto = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env, AuditSettings(trials=400)).to_dict()
    assert auto["details"]["floor_note"].startswith(
        "floors measured on this algorithm: outputs, releases (kept on this machine: measured by")
    assert auto["details"]["components"]["releases"]["details"]["algorithm_floor"] == fixed.to_dict()
    # another audit seed: the same floor (its simulations are seeded from floor_seed); another
    # floor seed: none kept
    other_seed = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env,
                             AuditSettings(trials=400, seed=1)).to_dict()  # fmt: skip
    assert "at any audit seed (floor seed 0)" in other_seed["details"]["floor_note"]
    other_floor_seed = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env,
                                   AuditSettings(trials=400, floor_seed=1))  # fmt: skip
    assert other_floor_seed.to_dict()["details"]["floor_note"] == REFERENCE_NOTE


def test_a_measured_floor_is_seeded_from_the_floor_seed_not_the_audits(monkeypatch):
    """Both views hand their floor measurement settings whose seed is ``floor_seed``, whatever the
    audit's seed: the floor is one of the procedure at its configuration, not of one audit's draws."""
    import bandits.auditing.black_box as bb
    import bandits.auditing.releases as rel
    from bandits.auditing.black_box import black_box_audit
    from bandits.auditing.views import audit_views
    from dpaudit.audit.leak_floor import LeakFloor, LeakPoint

    fixed = LeakFloor(0.3, 1.3, (LeakPoint(1.0, 0.9, 0.1),), 4, "stub", "epsilon", 1.0)
    seen: list[int] = []
    monkeypatch.setattr(bb, "black_box_leak_floor", lambda *a, **k: seen.append(a[3].seed) or fixed)
    monkeypatch.setattr(rel, "releases_leak_floor", lambda *a, **k: seen.append(a[3].seed) or fixed)
    env = parse_env("bernoulli:0.5,0.5")
    for seed, floor_seed in [(0, 0), (5, 0), (5, 9)]:
        settings = AuditSettings(trials=400, seed=seed, floor="algorithm", floor_seed=floor_seed)
        audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env, settings)
    assert seen == [0, 0, 0, 0, 9, 9]
    with pytest.raises(ValueError, match="floor_seed"):
        AuditSettings(trials=100, floor_seed=-1)


def test_a_blind_pilot_makes_the_outputs_view_inconclusive(monkeypatch):
    """A pilot whose best test predicts no positive bound (here: stubbed to 0) leaves the main test
    to run, but its bound of 0 is no evidence: the outputs view says ``inconclusive`` and why, and
    the run stays ``consistent`` only through the releases view, which had power."""
    import bandits.auditing.black_box as bb
    from bandits.auditing.black_box import black_box_audit
    from bandits.auditing.views import audit_views

    real = bb._pilot

    def blind(*a, **k):
        pc, pair, stat = real(*a, **k)
        return dataclasses.replace(pc, predicted=0.0), pair, stat

    env = parse_env("bernoulli:0.5,0.5")
    seeing = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env, AuditSettings(trials=400))
    assert seeing.primary.verdict == "consistent" and "no_power" not in seeing.primary.details
    monkeypatch.setattr(bb, "_pilot", blind)
    audit = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 4, env, AuditSettings(trials=400))
    assert audit.primary.verdict == "inconclusive" and audit.primary.details["no_power"]
    assert audit.primary.empirical == seeing.primary.empirical  # the same main test ran
    assert audit.components["releases"].verdict == "consistent" and audit.verdict == "consistent"
    assert "INCONCLUSIVE, without power: the pilot found no test with a positive predicted" in str(audit)
