"""Reduced coverage study and arm-specific planted bugs (benchmarks/bench_audit_coverage.py,
benchmarks/bench_audit_bugs.py run them full size)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_audit_bugs as bugs  # noqa: E402
import bench_audit_coverage as cov  # noqa: E402

from dpaudit.audit import run_audit  # noqa: E402


def test_thompson_truth_is_exact_enumeration():
    t = cov.thompson_truth()
    assert t["total_p"] == pytest.approx(1.0, abs=1e-12)
    assert 0.85 < t["mu"] < 0.93 and t["epsilon"] > 1.0


@pytest.mark.slow
@pytest.mark.parametrize(("family", "audits", "trials"), [("gaussian", 30, 20_000), ("laplace", 30, 20_000),
                                                          ("randomized-response", 30, 20_000),
                                                          ("thompson", 12, 2000)])  # fmt: skip
def test_reduced_coverage(family, audits, trials):
    """At 95 % confidence a bound may exceed the exact truth in ~5 % of audits: allow 3 of 30 (2 of 12)."""
    r = cov.run_family(family, audits, trials=trials, seed0=500)
    assert r["exceed_any"] <= (3 if audits >= 30 else 2), r
    if r["true_mu"] is not None:  # and the bounds are not vacuous
        assert r["median_mu_lower"] > 0.5 * r["true_mu"]
    else:
        assert r["median_epsilon_lower"] > 0.5 * r["true_epsilon"]


def test_rnm_arm_without_noise_is_caught_only_with_one_pair_per_arm():
    """A report-noisy-max that forgets the noise on arm 2: the pilot over one design per arm finds it;
    the former single pair (arm 1 gains) cannot (the weak auditor this test must fail on)."""
    bug = bugs.bugs()["rnm-noiseless-arm-2"]
    target = bug(20_000)
    found = run_audit(target, trials=20_000, seed=1)
    assert found.verdict == "violated" and found.details["selection"]["chosen_candidate"] != 0
    weak = run_audit(dataclasses.replace(target, candidates=()), trials=20_000, seed=1)
    assert weak.verdict != "violated"


def test_oracle_trials_of_a_known_case():
    """Binary RR with true ε = 1.25 against the claim ε = 1: the oracle's single test needs a few
    hundred trials; the pilot auditor detects it at twice that in at least half of 20 seeds."""
    bug = bugs.bugs()["rr-epsilon-1.25"]
    t = bugs._target(bug, 1000)
    import numpy as np

    orc = bugs.oracle_trials(bugs.true_tests(t, np.random.default_rng(0)), t.certified, t.delta)
    assert 300 < orc < 1500
    assert bugs.detection_rate(bug, 2 * orc, 20) >= 0.5


def test_pilot_power_criterion_prefers_the_rare_violating_event():
    """Two support designs, 100 pilot samples per side: a common event with likelihood ratio 4.9
    (cannot violate ε = 2) and a rare one with ratio 12.5 (violates). The predicted-power criterion
    (claim given) picks the rare one far more often than the pessimistic predicted bound."""
    import numpy as np

    from dpaudit.audit.pilot import pilot_choice

    def pilots(rng, n=100):
        return [((rng.random(n) < p0).astype(float), (rng.random(n) < p1).astype(float), (0.0, 1.0))
                for p0, p1 in ((0.055, 0.27), (0.012, 0.15))]  # fmt: skip

    new = old = 0
    for s in range(100):
        p = pilots(np.random.default_rng(s))
        new += pilot_choice(p, 2700, confidence=0.95, kind="epsilon", claim=2.0).candidate
        old += pilot_choice(p, 2700, confidence=0.95, kind="epsilon").candidate
    assert new >= 70 and new >= old + 20, (new, old)


def test_pilot_power_criterion_leaves_grid_families_to_the_pessimistic_rule():
    """Grid thresholds sit at the pilot's own order statistics (their pilot counts are not binomial),
    so a continuous family keeps the pessimistic rule even when the claim is given."""
    import numpy as np

    from dpaudit.audit.pilot import pilot_choice

    rng = np.random.default_rng(3)
    p = [(rng.normal(0, 1, 500), rng.normal(1.1, 1, 500), None)]
    assert pilot_choice(p, 10_000, confidence=0.95, claim=1.0) == pilot_choice(p, 10_000, confidence=0.95)
