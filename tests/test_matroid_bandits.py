"""Chandak, Hu & Hegde (2023) (DPUCB-MAT, DPTS-MAT; baselines OMM and CTS-Gaussian): the lazy
schedule, per-record ledgers and declarations for each initialisation, the initialisation audit,
and the paper's arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bandits.auditing.contract import AuditSettings
from bandits.engine.simulator import simulate
from bandits.environments.grammar import parse_combinatorial_env
from bandits.environments.movielens import movielens_env, movielens_like
from bandits.matroid.audit import audit_init_release, audit_matroid_policy
from bandits.matroid.policies import OMM, CTSGaussian, DPTSMat, DPUCBMat
from bandits.matroid.theory import lemma1_ratio, lemma3_ratio, lemma4_sum
from bandits.report import privacy_section
from bandits.run import run_policy
from dpaudit.declaration import check_ledgers
from dpaudit.events import LaplaceEvent
from dpaudit.ledger import Ledger, RunLedgers
from mechanisms.continual.epoch_sums import LazyEpochSums
from mechanisms.continual.epoch_sums_batch import BatchLazyEpochs, lazy_count, lazy_draws
from mechanisms.randomness import NoiseTape, RepRandom

E1 = parse_combinatorial_env("matroid-linear:e1")


def tape(reps: int, seed: int = 0) -> NoiseTape:
    return NoiseTape(RepRandom([np.random.SeedSequence(seed, spawn_key=(r,)) for r in range(reps)]))


# ---------------------------------------------------------------------------------------
# the lazy doubling schedule


def test_lazy_schedule_Te_and_draws_after_n_pulls():
    """T_e(N) = 2^{⌊log₂(N+2)⌋−1} and ⌊log₂(N+2)⌋ Laplace draws (Algorithms 2–3)."""
    assert [lazy_count(n) for n in range(0, 31)] == [1, 1] + [2] * 4 + [4] * 8 + [8] * 16 + [16]
    N = 200
    lazy = BatchLazyEpochs(1, 1, N + 1, epsilon=1.0, noise=tape(1), ledgers=None, width=1)
    lazy.release_all(np.zeros((1, 1)), 0, charge=False)
    for n in range(1, N + 1):
        lazy.push(np.zeros((1, 1), dtype=int), np.ones((1, 1)), n)
        assert lazy.size[0, 0] == lazy_count(n) == 2 ** (math.floor(math.log2(n + 2)) - 1)
        assert lazy.draws[0, 0] == lazy_draws(n) == math.floor(math.log2(n + 2))


def test_batch_lazy_epochs_match_lazy_epoch_sums():
    """Same epochs (so the same per-round charges) as mechanisms.continual.epoch_sums.LazyEpochSums, and every
    release is the exact epoch sum plus b times the repetition's own Laplace draw."""
    rng = np.random.default_rng(0)
    T, N = 300, 4
    arms = rng.integers(0, N, size=T)
    x = rng.random(T)
    ref = Ledger()
    lazy = LazyEpochSums(N, epsilon=0.5, rng=np.random.default_rng(1), ledger=ref)
    lazy.push_many(arms, x, units=range(T))
    led = RunLedgers(1)
    batch = BatchLazyEpochs(1, N, T, epsilon=0.5, noise=tape(1), ledgers=led, width=1)
    for t in range(T):
        batch.push(arms[t : t + 1, None], x[t : t + 1, None], t)
    batch.flush()
    assert led[0].charges() == ref.charges()
    assert batch.size[0].tolist() == lazy.epoch_size.tolist()
    assert batch.draws[0].tolist() == [sum(r.arm == a for r in lazy.releases) for a in range(N)]


# ---------------------------------------------------------------------------------------
# ledgers and declarations, per initialisation


@pytest.mark.parametrize("cls", [DPUCBMat, DPTSMat])
def test_every_record_is_charged_at_most_K_releases_except_the_paper_init(cls):
    T, L, K = 600, 7, 3
    eps0 = 2.0 / K
    lap = LaplaceEvent(scale=1 / eps0)
    for init, unit0 in (("paper", L), ("public-w0", None), ("cover", K)):
        pol = cls(2.0, init=init)
        res = simulate(pol, E1, T, 3, 5, progress=False)
        for led in res.ledgers:
            ch = led.charges()
            assert ch.get(0) == unit0
            assert max(c for u, c in ch.items() if u != 0) == K  # ≤ K·ε₀ = ε per record
            assert {e.event for e in led.entries} <= {lap, lap.repeat(L)}  # w0: L releases, one entry
            # an arm's unreleased buffer is smaller than its released epochs (+ 1): at least half
            assert sum(c for u, c in ch.items() if u != 0) >= (T * K - L) / 2
        check = check_ledgers(res.ledgers, pol.declare(T, L, E1.structure))
        assert check.ok and check.worst["ratio"] == pytest.approx(1.0)


@pytest.mark.slow
def test_certified_epsilon_and_the_published_claim():
    rep = run_policy(DPUCBMat(2.0), E1, 300, reps=2, progress=False)
    p = rep.privacy
    assert p.epsilon_pure == pytest.approx(7 * 2 / 3)  # L·ε₀ = 4.667 for the record w₀
    assert p.published["status"].startswith("NOT CERTIFIED")
    for init in ("public-w0", "cover"):
        q = run_policy(DPTSMat(2.0, init=init), E1, 300, reps=2, progress=False).privacy
        assert q.epsilon_pure == pytest.approx(2.0) and q.published["status"].startswith("covered")
    ml = movielens_env(movielens_like(seed=0))
    decl = DPUCBMat(2.0).declare(1000, ml.n_arms, ml.structure)
    assert privacy_section(decl, 1e-6).epsilon_pure == pytest.approx(100 * 2 / 17)  # 11.765
    assert decl.published.epsilon == 2.0
    assert OMM().declare(100, 7, E1.structure) is None and CTSGaussian().declare(100, 7, E1.structure) is None


def test_linear_rewards_only_and_bad_options():
    with pytest.raises(ValueError, match="linear rewards"):
        simulate(DPUCBMat(2.0), parse_combinatorial_env("topk:k=2,means=0.3/0.6/0.9,reward=min"), 10, 1)
    with pytest.raises(ValueError, match="init must be one of"):
        DPUCBMat(2.0, init="free")
    with pytest.raises(ValueError, match="epsilon must be in"):
        DPTSMat(-1.0)


def test_paper_and_public_w0_play_the_same_actions_and_omm_updates_every_round():
    a = simulate(DPUCBMat(2.0), E1, 400, 2, 3, record_actions=True, progress=False)
    b = simulate(DPUCBMat(2.0, init="public-w0"), E1, 400, 2, 3, record_actions=True, progress=False)
    assert np.array_equal(a.actions, b.actions)  # only the accounting differs
    res = simulate(OMM(init="cover"), E1, 400, 2, 3, record_actions=True, progress=False)
    assert res.actions[:, 0].tolist() == [[0, 1, 2]] * 2 and res.actions[:, 1].tolist() == [[3, 4, 5]] * 2
    assert res.ledgers[0].charges() == {}


# ---------------------------------------------------------------------------------------
# the initialisation audit


@pytest.mark.slow
def test_paper_initialisation_is_violated_against_epsilon_by_the_full_vector_llr():
    own, pub = audit_init_release(DPUCBMat(2.0), E1, trials=5000, seed=0)
    assert pub.verdict == "violated" and pub.certified.epsilon == 2.0
    assert 2.0 < own.empirical.epsilon_lower <= 7 * 2 / 3
    assert own.verdict == "consistent" and own.certified.epsilon == pytest.approx(7 * 2 / 3, rel=1e-3)
    combined = audit_matroid_policy(
        DPTSMat(2.0), 20, E1, AuditSettings(trials=100, seed=1), init_trials=1000
    ).to_dict()
    assert combined["verdict"] == "consistent" and "published_verdict" in combined
    assert "action sequences" in combined["details"]["components"]
    with pytest.raises(ValueError, match="no initialisation release"):
        audit_init_release(DPUCBMat(2.0, init="cover"), E1, trials=100)


@pytest.mark.slow
def test_public_w0_audit_never_changes_round_0():
    rep = audit_matroid_policy(
        DPUCBMat(2.0, init="public-w0"), 20, E1, AuditSettings(trials=100, seed=2)
    ).to_dict()
    assert rep["details"]["chosen"]["pair"]["round"] >= 1
    assert all(" 0 " not in c for c in rep["details"]["candidates"])


# ---------------------------------------------------------------------------------------
# the paper's arithmetic


@pytest.mark.slow
def test_lemma1_and_lemma3_hold_on_random_decreasing_gaps():
    rng = np.random.default_rng(9)
    worst1 = worst3 = 0.0
    for _ in range(10_000):
        k = int(rng.integers(1, 8))
        d = np.sort(rng.uniform(1e-3, 1.0, size=k))[::-1]
        worst1 = max(worst1, lemma1_ratio(d, float(rng.uniform(1e-3, 2.0))))
        worst3 = max(worst3, lemma3_ratio(d))
    assert worst1 <= 1 + 1e-12 and worst3 <= 1 + 1e-12
    assert worst1 > 0.95  # nearly tight (0.9998 over 2·10⁵ draws)


def test_lemma4_does_not_decay_in_n():
    """Lemma 4 is false as stated: the proof's own sum is ≥ K⁻³ (its t = 1 term), not O(1/(K²n²))."""
    for k, n in ((3, 10**4), (3, 10**6), (17, 10**4)):
        s = lemma4_sum(k, n)
        assert s >= k**-3 and s > 1e3 / (k * k * n * n)
    assert lemma4_sum(3, 10**4) == pytest.approx(0.0486, abs=1e-4)
    assert lemma4_sum(17, 10**6) == pytest.approx(2.67e-4, rel=1e-2)
