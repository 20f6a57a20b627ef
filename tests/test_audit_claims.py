"""Published claims audited end to end (numbers in docs/audit-findings.md)."""

from __future__ import annotations

import math

import pytest

from dpaudit.analyses.rnm_gaussian import published_bound_theorem7
from dpaudit.audit.report import CONSISTENT, VIOLATED
from dpaudit.audit.runner import run_audit
from mechanisms.auditing.targets import (
    cascade_target,
    published_claim,
    rnm_gaussian_target,
    rnm_laplace_target,
)

S2 = 2**-0.5
TRIALS = 200_000


@pytest.mark.slow
@pytest.mark.parametrize(
    "sens,sigmas", [(0.5, [S2, S2]), ([0.5, 1 / 10001], [S2, 10001**-0.5]), (0.5, [S2] * 5)]
)
def test_ou2024_theorem6_7_is_violated_at_delta_001(sens, sigmas):
    claim = published_claim("rnm-gaussian", sensitivities=sens, sigmas=sigmas, delta=0.01)
    if len(sigmas) == 2:
        assert claim.epsilon == pytest.approx(published_bound_theorem7(2, 0.01))
    t = rnm_gaussian_target(sens, sigmas, trials=TRIALS, claim=claim)
    # the exact profile of the chosen pair already refutes the claim ...
    assert t.details["exact"]["pair_delta_at_claimed_epsilon"] > 0.01
    r = run_audit(t, trials=TRIALS, seed=0)
    # ... and so does sampling
    assert r.verdict == VIOLATED
    assert claim.epsilon < r.empirical.epsilon_lower <= t.details["exact"]["pair_epsilon_at_delta"]


@pytest.mark.slow
def test_ou2024_claim_at_delta_01_in_scenario_a_is_not_refuted():
    """Where the exact profile says Theorem 7 holds (N = 2, δ = 0.1, equal σ), the audit agrees."""
    claim = published_claim("rnm-gaussian", sensitivities=0.5, sigmas=[S2, S2], delta=0.1)
    t = rnm_gaussian_target(0.5, [S2, S2], trials=TRIALS, claim=claim)
    assert t.details["exact"]["pair_delta_at_claimed_epsilon"] < 0.1
    assert run_audit(t, trials=TRIALS, seed=0).verdict == CONSISTENT


@pytest.mark.slow
def test_ou2024_toolkit_gdp_certificate_is_consistent():
    r = run_audit(
        rnm_gaussian_target([0.5, 1 / 10001], [S2, 10001**-0.5], trials=TRIALS), trials=TRIALS, seed=0
    )
    assert r.certified.mu == pytest.approx(S2) and r.verdict == CONSISTENT
    assert r.fraction_recovered > 0.85


def test_hu2024_theorem8_laplace_rnm_under_replace():
    thm8 = published_claim("rnm-laplace", scale=1.0)
    t = rnm_laplace_target(1.0, 2, "replace", trials=TRIALS, epoch_length=16, claim=thm8)
    assert t.details["exact"]["worst_case_loss_at_epoch_length"] == pytest.approx(1.882, abs=1e-3)
    r = run_audit(t, trials=TRIALS, seed=0)
    assert r.verdict == VIOLATED and 1.0 < r.empirical.epsilon_lower <= t.pair.exact_loss
    own = run_audit(
        rnm_laplace_target(1.0, 2, "replace", trials=TRIALS, epoch_length=16), trials=TRIALS, seed=0
    )
    assert own.certified.epsilon == 2.0 and own.verdict == CONSISTENT
    # under (monotone) add/remove the claim eps holds, and the audit does not refute it
    ar = rnm_laplace_target(1.0, 2, "add-remove", trials=TRIALS, epoch_length=16, claim=thm8)
    assert run_audit(ar, trials=TRIALS, seed=0).verdict == CONSISTENT


def test_hu2024_most_extreme_pair_is_not_detectable_by_sampling():
    """(16, 0) vs (15, 1) has loss 1.88, but its distinguishing output has probability ~5e-7."""
    t = rnm_laplace_target(1.0, 2, trials=TRIALS, gap=16, claim=published_claim("rnm-laplace", scale=1.0))
    assert t.pair.exact_loss == pytest.approx(1.882, abs=1e-3)
    assert run_audit(t, trials=TRIALS, seed=0).empirical.epsilon_lower < 1.0


@pytest.mark.parametrize("delta", [None, 1e-3])
@pytest.mark.parametrize("click_prime", [None, 4])
def test_wang2021_report_length_leaks_click_position(delta, click_prime):
    t = cascade_target(4, 1.0, delta, click=1, click_prime=click_prime)
    assert t.pair.exact_loss == math.inf and t.details["lengths"][0] != t.details["lengths"][1]
    r = run_audit(t, trials=TRIALS, seed=0)
    assert r.verdict == VIOLATED and r.empirical.epsilon_lower > 9.0  # grows like log(trials)


def test_wang2021_fixed_length_variant_and_k1_are_consistent():
    for t in (cascade_target(4, 1.0, report="all-positions"), cascade_target(1, 1.0)):
        assert run_audit(t, trials=TRIALS, seed=0).verdict == CONSISTENT
