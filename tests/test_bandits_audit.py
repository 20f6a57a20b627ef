"""Tests of the white-box Thompson-sampling audit (bandits/thompson/audit.py), reduced scale."""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.stats import norm

from bandits import GaussianTS, RewardTableEnv, simulate
from bandits.auditing.contract import AuditSettings
from bandits.environments import parse_env
from bandits.thompson.action_probabilities import (
    _SQRT_HALF,
    _TRAP_Z,
    _fast_log_probabilities,
    _product,
    _two_phi,
    log_action_probabilities,
)
from bandits.thompson.agent import GaussianTSAgent
from bandits.thompson.audit import ThompsonAuditOptions, audit_thompson
from bandits.thompson.audit_designs import TSNeighbour
from bandits.thompson.audit_trajectories import (
    _exact_block,
    _hits_and_counts,
    _start_counts,
    black_box_statistic,
    model_actions,
    policy_actions,
    score_statistic,
    trajectory_losses,
)
from dpaudit.analyses.gaussian_argmax import argmax_log_distribution, log_argmax_probability
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.report import AuditReport
from tests.mp_reference import log_argmax_mp


class _HiddenQuarterAgent(GaussianTSAgent):
    """Samples with posterior variance c/4 but records (in the ledger) the scale of c."""

    def __init__(self, policy, run):
        super().__init__(policy, run)
        self._sqrtc = math.sqrt(policy.c / 4)
        self._scale[...] = self._sqrtc
        self._sqrtc_entry[...] = self._sqrtc  # the compiled loops' scale

    def _record(self, t0, t1, n_start):
        honest, self._sqrtc = self._sqrtc, math.sqrt(self.policy.c)
        try:
            super()._record(t0, t1, n_start)
        finally:
            self._sqrtc = honest


@dataclass(frozen=True)
class HiddenQuarterVarianceTS(GaussianTS):
    """Planted bug the run's ledger check cannot see: samples with variance c/4, records c."""

    def agent(self, run):  # type: ignore[override]
        return _HiddenQuarterAgent(self, run)


def _exact_sequence_logprob(seq, table, b, c, N):
    """Brute force: log P(a | table) of a whole action sequence, from first principles."""
    S, n, lp = np.zeros(N), np.zeros(N), 0.0
    for t, a in enumerate(seq):
        if t >= b * N and not (b == 0 and t == 0):
            mu, sg = S / (n + 1), np.sqrt(c / (n + 1))
            if N == 2:
                o = 1 - a
                lp += norm.logcdf((mu[a] - mu[o]) / np.hypot(sg[a], sg[o]))
            else:
                lp += argmax_log_distribution(mu, sg)[a]
        elif b == 0 and t == 0:
            lp += np.log(1.0 / N)
        S[a] += table[t, a]
        n[a] += 1
    return lp


@pytest.mark.slow
@pytest.mark.parametrize("N,b,T,c", [(2, 1, 7, 1.0), (2, 0, 6, 2.0), (3, 1, 6, 1.0), (4, 1, 7, 1.0),
                                     (4, 0, 4, 1.5)])
def test_white_box_loss_exact_by_enumeration(N: int, b: int, T: int, c: float) -> None:
    pol = GaussianTS(b=b, c=c)
    tab = TSNeighbour(leader_reward=0.7).tables(pol, T, N)
    pre = [t // b for t in range(b * N)] if b else []
    free = T - len(pre)
    seqs = np.array([pre + list(s) for s in itertools.product(range(N), repeat=free)])
    lp = np.array([[_exact_sequence_logprob(s, t, b, c, N) for s in seqs] for t in (tab.null, tab.alt)])
    assert np.exp(lp[0]).sum() == pytest.approx(1.0, abs=1e-9)
    assert np.exp(lp[1]).sum() == pytest.approx(1.0, abs=1e-9)
    L = trajectory_losses(seqs, tab, c)
    np.testing.assert_allclose(L, lp[0] - lp[1], atol=1e-7)


@pytest.mark.slow
def test_action_probabilities_match_mpmath() -> None:
    """The audit's per-round action probabilities against 25-digit mpmath quadrature on random
    Thompson-sampling states (N = 3..6, counts 1..400, c in {1, 4, 30}); the two-arm closed form too."""
    rng = np.random.default_rng(3)
    for _ in range(12):
        N = int(rng.integers(3, 7))
        n = rng.integers(1, 400, N).astype(float)
        mu = rng.integers(0, 2, N) * rng.random(N) * n / (n + 1)
        sg = np.sqrt(rng.choice([1.0, 4.0, 30.0]) / (n + 1))
        a = int(rng.integers(0, N))
        got = log_action_probabilities(mu[None, :], sg[None, :], np.array([a]))[0]
        ref = float(log_argmax_mp(mu.tolist(), sg.tolist(), a))
        assert abs(got - ref) <= 1e-10 * max(1.0, abs(ref)), (mu, sg, a)
    mu2, sg2 = np.array([0.3, 0.6]), np.array([0.2, 0.9])
    got2 = log_action_probabilities(np.tile(mu2, (2, 1)), np.tile(sg2, (2, 1)), np.arange(2))
    np.testing.assert_allclose(got2, [float(log_argmax_mp(mu2.tolist(), sg2.tolist(), i)) for i in (0, 1)],
                               rtol=1e-12)


def test_policy_actions_are_the_simulators() -> None:
    pol = GaussianTS(b=3, c=2.0)
    tab = TSNeighbour().tables(pol, 200, 3)
    seq = np.random.SeedSequence(5)
    a0, a = policy_actions(pol, tab.null, 200, 50, seq)
    res = simulate(pol, RewardTableEnv(tab.null), 200, 50, seq, record_actions=True, progress=False)
    assert np.array_equal(res.actions[:, 9:], a) and np.array_equal(res.actions[:, 0], a0)
    assert (black_box_statistic(res.actions, tab) == (a == 1).sum(axis=1)).all()
    # b = 0: the holder of the changed reward is whoever played round 0
    pol0 = GaussianTS(b=0, c=1.0)
    tab0 = TSNeighbour().tables(pol0, 30, 2)
    a0, a = policy_actions(pol0, tab0.null, 30, 40, seq)
    res0 = simulate(pol0, RewardTableEnv(tab0.null), 30, 40, seq, record_actions=True, progress=False)
    assert np.array_equal(res0.actions[:, 1:], a) and np.array_equal(res0.actions[:, 0], a0)


@pytest.mark.slow
def test_score_and_exact_losses_of_blocks_match_direct_computation() -> None:
    """The block statistics (score, 2-arm closed form, N-arm trapezoid) against trajectory_losses
    (exact quadrature) and a literal loop for the score and the goodness-of-fit sums."""
    for N, b, c in ((2, 2, 3.0), (3, 2, 2.0), (4, 0, 1.5)):
        pol = GaussianTS(b=b, c=c)
        T = b * N + 40
        tab = TSNeighbour(leader_reward=0.6).tables(pol, T, N)
        res = simulate(pol, RewardTableEnv(tab.null), T, 20, 3, record_actions=True, progress=False)
        A = res.actions.astype(np.intp)
        t0 = tab.first_private_round
        start, hold = _start_counts(A[:, 0], tab, b)
        blk = _exact_block(A[:, t0:].astype(np.int8), hold, start, tab, c, 0, np.random.default_rng(0))
        np.testing.assert_allclose(blk["L"], trajectory_losses(A, tab, c), rtol=0, atol=1e-9)
        # literal per-round loop
        score, gsum, gvar = np.zeros(20), 0.0, 0.0
        cols = np.asarray(tab.columns)
        for r in range(20):
            n, S = start[r].copy(), start[r] * cols
            S[hold[r]] += tab.values[0] - cols[hold[r]]
            for t in range(t0, T):
                j, a = hold[r], A[r, t]
                score[r] += ((a == j) - 1 / N) / math.sqrt(c * (n[j] + 1))
                p = np.exp(argmax_log_distribution(S / (n + 1), np.sqrt(c / (n + 1))))[j]
                gsum, gvar = gsum + (a == j) - p, gvar + p * (1 - p)
                n[a] += 1
                S[a] += cols[a]
        np.testing.assert_allclose(score_statistic(A[:, t0:], hold, start, c), score, atol=1e-12)
        assert blk["gof_sum"] == pytest.approx(gsum, abs=1e-7)
        assert blk["gof_var"] == pytest.approx(gvar, rel=1e-9)


def test_fast_rule_is_checked_against_the_exact_quadrature() -> None:
    rng = np.random.default_rng(0)
    n = rng.integers(1897, 2800, (3000, 5)).astype(float)
    mu, sg, a = 0.5 * n / (n + 1), np.sqrt(47.69 / (n + 1)), rng.integers(0, 5, 3000)
    fast, info = _fast_log_probabilities(mu, sg, a, np.random.default_rng(1))
    assert info["rule"].startswith("41-node") and info["max_abs_error_log_p"] < 1e-8
    np.testing.assert_allclose(fast, log_argmax_probability(mu, sg, a), atol=1e-8)
    # far from a tie (tiny counts, very different widths) the rule is replaced by the exact one
    n = rng.integers(1, 40, (500, 5)).astype(float)
    mu, sg = rng.random((500, 5)) * n / (n + 1), np.sqrt(1.0 / (n + 1))
    got, info = _fast_log_probabilities(mu, sg, a[:500], np.random.default_rng(1))
    assert info["rule"].startswith("exact")
    np.testing.assert_array_equal(got, log_argmax_probability(mu, sg, a[:500]))


@pytest.mark.parametrize("k", [0, 1, 2, 4])
def test_the_rules_factors_are_the_plain_expressions_bit_for_bit(k: int) -> None:
    """The rule's in-place factors and left-to-right products equal the one-expression factors and
    ``prod`` they replaced, bit for bit (so the audit's numbers did not move)."""
    rng = np.random.default_rng(k)
    mc, gc = rng.normal(0.5, 0.1, 300), rng.uniform(0.1, 0.2, 300)
    m, g = rng.normal(0.5, 0.1, (300, k)), rng.uniform(0.1, 0.2, (300, k))
    from scipy.special import erfc

    plain = erfc(((mc[:, None, None] + gc[:, None, None] * _TRAP_Z[None, :, None] - m[:, None, :])
                  / g[:, None, :]) * -_SQRT_HALF)  # fmt: skip
    got = _two_phi(mc, gc, m, g)
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(_product(got), got.prod(axis=2))
    wide = rng.random((50, 41, 9)) * 2.0  # products that round differently in any other order
    np.testing.assert_array_equal(_product(wide), wide.prod(axis=2))


def test_the_holders_counts_are_the_plain_running_sums() -> None:
    rng = np.random.default_rng(5)
    a, hold = rng.integers(0, 4, (64, 300)).astype(np.int8), rng.integers(0, 4, 64)
    hit, cnt = _hits_and_counts(a, hold)
    plain = np.cumsum(a == hold[:, None], axis=1) - (a == hold[:, None])
    np.testing.assert_array_equal(cnt, plain)
    assert cnt.dtype == np.int32 and hit.dtype == bool


def test_model_is_algorithm_2() -> None:
    """The model's law of short action sequences equals the exact enumeration."""
    pol = GaussianTS(b=1, c=2.0)
    tab = TSNeighbour(leader_reward=0.7).tables(pol, 5, 2)
    _, a = model_actions(ThompsonConfig(5, 2, 1, 2.0), tab.null, 40_000, np.random.default_rng(3))
    seqs = np.array([[0, 1] + list(s) for s in itertools.product(range(2), repeat=3)])
    p = np.exp([_exact_sequence_logprob(s, tab.null, 1, 2.0, 2) for s in seqs])
    code = (a.astype(int) * np.array([4, 2, 1])).sum(axis=1)
    freq = np.bincount(code, minlength=8) / 40_000
    assert np.abs(freq - p).max() < 4 * math.sqrt(0.25 / 40_000)


def _plain_model(T: int, N: int, b: int, c: float, table: np.ndarray, size: int, rng) -> np.ndarray:
    """Algorithm 2 as its definition reads: every posterior computed afresh in every round."""
    S, n, rows, out = np.zeros((size, N)), np.zeros((size, N)), np.arange(size), []
    for i in range(N if b else 0):
        S[:, i], n[:, i] = table[i * b : (i + 1) * b, i].sum(), b
    for t in range(b * N, T):
        a = np.argmax(S / (n + 1.0) + np.sqrt(c / (n + 1.0)) * rng.standard_normal((size, N)), axis=1)
        S[rows, a] += table[t, a]
        n[rows, a] += 1.0
        out.append(a)
    return np.array(out).T


@pytest.mark.parametrize("b", [0, 3])
def test_model_keeps_its_posteriors_bit_for_bit(b: int) -> None:
    """The model updates only the posteriors a pull changed: the same actions, bit for bit, as
    computing every posterior afresh each round."""
    T, N, c = 60, 4, 2.5
    table = np.random.default_rng(1).random((T, N))
    a0, a = model_actions(ThompsonConfig(T, N, b, c), table, 300, np.random.default_rng(2))
    plain = _plain_model(T, N, b, c, table, 300, np.random.default_rng(2))
    first = b * N if b else 1
    np.testing.assert_array_equal(a, plain[:, first - b * N :])
    if not b:
        np.testing.assert_array_equal(a0, plain[:, 0])


def _ts_audit(policy: GaussianTS, horizon: int, arms: int, *, trials: int, seed: int = 0, executor=None,
              **options) -> AuditReport:  # fmt: skip
    """The audit's primary report (the actions; its other view, the posterior draws, is tested in
    tests/test_ts_draws_audit.py)."""
    env = parse_env("bernoulli:" + ",".join(["0.5"] * arms))
    settings = AuditSettings(trials=trials, seed=seed, executor=executor)
    audit = audit_thompson(policy, horizon, env, settings, ThompsonAuditOptions(**options))
    assert set(audit.components) == {"releases"}
    return audit.primary


@pytest.mark.slow
def test_consistent_two_arms_with_floor_estimate_and_passing_model_tests() -> None:
    rep = _ts_audit(GaussianTS(b=20, c=4.0), 340, 2, trials=6000)
    d = rep.details
    assert rep.verdict == "consistent" and not d["model_tests"]["rejected"]
    assert 0 < rep.empirical.mu_lower < rep.certified.mu
    assert rep.floor is not None and rep.floor.mu < rep.certified.mu < rep.floor.mu_violation
    assert rep.estimate.lower <= rep.empirical.mu_lower + 1e-12 < rep.estimate.upper
    assert d["exact_loss"]["trajectories_per_table"] == d["certifying_test"]["trajectories_per_table"]
    lr = [t for t in d["model_tests"]["tests"] if t["test"].startswith("likelihood")]
    assert len(lr) == 2 and all(abs(t["means"][0] - t["means"][1]) < 0.02 for t in lr)
    assert rep.to_dict()["verdict"] == "consistent" and rep.to_dict()["detection_floor"]["mu"] > 0


@pytest.mark.slow
def test_hidden_quarter_variance_bug_is_a_model_mismatch() -> None:
    """The c/4 posterior-variance bug stays below the certificate (the certified bound alone says
    'consistent') but the implementation no longer matches its model. An auditor without the
    model tests (the weak one) would pass it."""
    kw = dict(trials=6000, seed=1)
    bad = _ts_audit(HiddenQuarterVarianceTS(b=20, c=4.0), 340, 2, **kw)
    good = _ts_audit(GaussianTS(b=20, c=4.0), 340, 2, **kw)
    assert good.verdict == "consistent"
    assert bad.verdict in ("model-mismatch", "violated")
    assert bad.details["model_tests"]["rejected"]
    assert bad.empirical.mu_lower < bad.certified.mu  # the weak auditor's view: nothing found


@pytest.mark.slow
def test_five_arms_small_and_executor_independent() -> None:
    kw = dict(trials=2500, seed=2, exact_trials=20)
    a = _ts_audit(GaussianTS(b=2, c=2.0), 70, 5, **kw)
    with ThreadPoolExecutor(2) as ex:
        b = _ts_audit(GaussianTS(b=2, c=2.0), 70, 5, executor=ex, **kw)
    assert a.empirical == b.empirical and a.details["model_tests"] == b.details["model_tests"]
    assert a.verdict in ("consistent", "inconclusive") and not a.details["model_tests"]["rejected"]
    assert a.details["exact_loss"]["trajectories_per_table"] == 20


def test_claim_override_and_validation() -> None:
    rep = _ts_audit(GaussianTS(b=1, c=1.0), 20, 2, trials=3000, claim=ThompsonConfig(20, 2, 1, 1e6))
    assert rep.verdict == "violated"  # an absurdly small claim is refuted
    with pytest.raises(ValueError):
        _ts_audit(GaussianTS(), 1, 2, trials=3000)
    with pytest.raises(ValueError):
        TSNeighbour(arm=0)
    with pytest.raises(ValueError):
        TSNeighbour(values=(0.5, 0.5))
