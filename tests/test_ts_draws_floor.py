"""The floor of Thompson sampling's releases view measured on the algorithm
(:mod:`bandits.thompson.draws_floor`): the scaled agent, the estimate against the view it
describes, and the audit's report."""

from __future__ import annotations

import numpy as np
import pytest

from bandits import GaussianTS
from bandits.thompson.audit_designs import TSNeighbour
from bandits.thompson.audit_trajectories import _policy_block, policy_actions, sample_stage
from bandits.thompson.draws_audit import draws_report
from bandits.thompson.draws_floor import draws_leak_floor
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.leak_floor import LeakFloor

POLICY = GaussianTS(b=1, c=1.0)
T = 40
TABLES = TSNeighbour().tables(POLICY, T, 2)
MU = ThompsonConfig(T, 2, 1, 1.0).mu_tight


def test_the_scaled_agent_draws_its_posterior_noise_at_that_scale():
    seq = np.random.SeedSequence(3, spawn_key=(1,))
    one = policy_actions(POLICY, TABLES.null, T, 50, seq, watch=0)
    same = policy_actions(POLICY, TABLES.null, T, 50, seq, watch=0, noise_factor=1.0)
    half = policy_actions(POLICY, TABLES.null, T, 50, seq, watch=0, noise_factor=0.5)
    assert all((a == b).all() for a, b in zip(one, same, strict=True))
    # the first sampling round has the same posterior in both: θ − mean halves, so θ½ − θ/2 = mean/2
    gap = half[2][:, 0] - 0.5 * one[2][:, 0]
    assert np.ptp(gap) < 1e-12 and np.ptp(one[2][:, 0]) > 0.1


@pytest.mark.slow
def test_the_floor_predicts_how_often_the_view_refutes_the_certificate():
    """At the measured violation factor, the view run on fresh main samples of the scaled agent
    refutes the certificate about half of the time (60 main samples: 50 % ± 20 points)."""
    n = 1500
    f = draws_leak_floor(POLICY, TABLES, T, n, seed=0, confidence=0.975, mu_certified=MU)
    assert f.has_power and f.violate_leak is not None and 1.0 < f.violate_leak < 8.0
    hits = 0
    for s in range(1, 61):
        tail = (0, POLICY.c, True, 1.0 / f.violate_leak)
        main = sample_stage(_policy_block, (POLICY, TABLES, T), tail, 1, 0, n, s, None, False, "")
        rep = draws_report(main, mu_certified=MU, delta=1e-6, confidence=0.975)
        hits += rep.verdict.value == "violated"
    assert 0.3 <= hits / 60 <= 0.7, hits


@pytest.mark.parametrize("detect, verdict", [(0.5, "consistent"), (3.0, "inconclusive")])
def test_a_releases_view_without_power_on_the_algorithm_is_inconclusive(detect, verdict):
    rng = np.random.default_rng(0)
    main = [{"draws": rng.normal(0.02, 0.2, 4000)}, {"draws": rng.normal(-0.02, 0.2, 4000)}]
    main = [m | {"draws_first": m["draws"] / 40} for m in main]
    floor = LeakFloor(detect, 4.0, (), 1, "every posterior noise draw scaled by 1/L", "mu", 0.2)
    rep = draws_report(main, mu_certified=0.2, delta=1e-6, confidence=0.975, measured=floor)
    assert rep.verdict.value == verdict
    assert rep.details["algorithm_floor"]["detect_leak"] == detect
