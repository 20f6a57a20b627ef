"""The releases view of Gaussian Thompson sampling (bandits.thompson.draws_audit): the agent hands
over its own posterior draws, identically in both engines; their exact loss has the law the
declared mechanism gives it; a correct sampler passes, and noise at half its scale — which the
actions barely show — is refuted."""

from __future__ import annotations

import numpy as np
import pytest

from bandits import GaussianTS, parse_env
from bandits.auditing.contract import AuditSettings
from bandits.engine import compiled
from bandits.thompson.audit import audit_thompson
from bandits.thompson.audit_designs import TSNeighbour
from bandits.thompson.audit_trajectories import (
    _hits_and_counts,
    _start_counts,
    draws_loss,
    policy_actions,
)
from benchmarks.planted_bugs import bugs_for
from tests.conftest import NUMBA


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
@pytest.mark.parametrize("b,N,watch", [(4, 3, 1), (0, 2, -1)])
def test_watching_the_draws_changes_no_action_and_reads_the_agents_draws(numba_mode, b, N, watch):
    """The actions are those of the unwatched run; each draw is the agent's θ of the watched arm:
    μ̂ + scale·Z from the same noise stream (checked against the round's posterior and the
    argmax: a watched arm that was played had the largest draw of its round)."""
    pol = GaussianTS(b=b, c=3.0)
    T = b * N + 150
    tab = TSNeighbour().tables(pol, T, N)
    seq = np.random.SeedSequence(11)
    a0, a = policy_actions(pol, tab.null, T, 40, seq)
    w0, wa, drawn = policy_actions(pol, tab.null, T, 40, seq, watch=watch)
    assert np.array_equal(a0, w0) and np.array_equal(a, wa)
    assert drawn.shape == a.shape and np.isfinite(drawn).all()
    hold = np.full(40, watch) if watch >= 0 else a0.astype(np.intp)
    start, _ = _start_counts(a0, tab, b)
    _, cnt = _hits_and_counts(a, hold)
    n = cnt + start[np.arange(40), hold][:, None]
    # the draws scatter around the posterior mean with sd sqrt(c/(n+1)) (standardised: mean 0, sd 1)
    cols = np.asarray(tab.columns)[hold][:, None]
    mean = (n * cols - cols + tab.values[0]) / (n + 1.0)
    z = (drawn - mean) / np.sqrt(3.0 / (n + 1.0))
    assert abs(z.mean()) < 4 / np.sqrt(z.size) and abs(z.std() - 1.0) < 0.03


def test_both_engines_hand_over_the_same_draws(monkeypatch):
    if not compiled.available():
        pytest.skip("numba is not installed")
    pol = GaussianTS(b=3, c=2.0)
    tab = TSNeighbour().tables(pol, 200, 3)
    seq = np.random.SeedSequence(4)
    with_numba = policy_actions(pol, tab.alt, 200, 25, seq, watch=1)
    monkeypatch.setenv("DPAUDIT_NUMBA", "0")
    without = policy_actions(pol, tab.alt, 200, 25, seq, watch=1)
    for x, y in zip(with_numba, without):
        assert np.array_equal(x, y)


def test_the_draws_loss_has_the_declared_mechanisms_law():
    """Under R the exact loss of a transcript of Gaussian draws has mean Σ d²/(2σ²) and variance
    Σ d²/σ² (d the mean shift, σ the declared scale) — and under R′ the mirror image."""
    pol = GaussianTS(b=30, c=5.0)
    T = 30 * 3 + 400
    tab = TSNeighbour().tables(pol, T, 3)
    out = []
    for side, table in ((0, tab.null), (1, tab.alt)):
        a0, a, drawn = policy_actions(pol, table, T, 3000, np.random.SeedSequence(side), watch=tab.observer)
        start, hold = _start_counts(a0, tab, pol.b)
        _, cnt = _hits_and_counts(a, hold)
        s0 = start[np.arange(a.shape[0]), hold]
        L = draws_loss(drawn, cnt, s0, np.asarray(tab.columns)[hold], tab.values, pol.c)
        eta = (1.0 / (pol.c * (cnt + s0[:, None] + 1.0))).sum(axis=1)  # Σ d²/σ², d = 1/(n+1)
        out.append((L, eta))
    (L0, e0), (L1, e1) = out
    assert abs(L0.mean() - e0.mean() / 2) < 4 * L0.std() / np.sqrt(L0.size)
    assert abs(L1.mean() + e1.mean() / 2) < 4 * L1.std() / np.sqrt(L1.size)
    assert abs(L0.var() / e0.mean() - 1.0) < 0.1


def _tiny_audit(bug=None):
    env = parse_env("bernoulli:0.75,0.625,0.5")
    pol = GaussianTS(b=40, c=6.0)
    T = 40 * 3 + 600
    settings = AuditSettings(trials=6000, seed=1)
    if bug is None:
        return audit_thompson(pol, T, env, settings)
    with bug.plant():
        return audit_thompson(pol, T, env, settings)


def test_a_correct_sampler_passes_both_views_and_the_draws_see_most_of_the_certificate():
    audit = _tiny_audit()
    draws = audit.components["releases"]
    assert audit.verdict == "consistent" and draws.verdict.value == "consistent"
    assert audit.primary.empirical.confidence == draws.empirical.confidence == 0.975
    # the draws reveal more than the actions; here the changed arm's count grows from 40 to about
    # 240 while the certificate charges every round at 40 pulls, so they show about 0.6 of it
    assert draws.empirical.mu_lower > audit.primary.empirical.mu_lower
    assert draws.details["mu_gaussian_fit"] > 0.5 * draws.certified.mu


def test_noise_at_half_its_scale_is_refuted_by_the_draws():
    pol = GaussianTS(b=40, c=6.0)
    half = bugs_for("ts", pol, 3)[0]
    assert half.kind == "noise x1/2"
    audit = _tiny_audit(half)
    assert audit.verdict == "violated"
    assert audit.components["releases"].verdict.value == "violated"


def test_the_pilot_alarm_fires_on_separable_draws_only() -> None:
    """:func:`draws_alarm` is the pilot's own 99.9 % bound: near 0 for overlapping losses, far above
    any certificate when a draw is deterministic (the losses of R and R′ never overlap)."""
    from bandits.thompson.draws_audit import draws_alarm

    rng = np.random.default_rng(0)
    noisy = [{k: rng.normal(s, 1.0, 333) for k in ("draws", "draws_first")} for s in (0.05, -0.05)]
    raw = [{"draws": rng.normal(s, 1.0, 333), "draws_first": np.full(333, s)} for s in (0.01, -0.01)]
    assert draws_alarm(noisy) < 0.2 and draws_alarm(raw) > 3.0


def test_a_bug_on_arm_2s_draws_steers_the_main_sample_to_arm_2() -> None:
    """Only a pair that changes arm 2's reward sees arm 2's noiseless draws: the pilot's alarm
    moves the main sample there, and the draws refute the certificate."""
    pol = GaussianTS(b=40, c=6.0)
    bug = bugs_for("ts", pol, 3)[2]
    assert bug.kind == "unit 2 noiseless"
    audit = _tiny_audit(bug)
    pilot = audit.primary.details["pilot"]
    assert pilot["designs"][pilot["chosen_design"]].startswith("arm 2's")
    assert max(pilot["draws_alarm_mu"]) > audit.primary.certified.mu
    assert audit.components["releases"].verdict.value == "violated"
