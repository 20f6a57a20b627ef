"""Tests for mechanisms.continual.epoch_sums: per-arm and global doubling-epoch forgetful sums."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpaudit.accounting import account
from dpaudit.events import (
    ComposedEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
)
from dpaudit.ledger import Ledger
from mechanisms.continual.epoch_sums import (
    GlobalEpochSums,
    LazyEpochSums,
    rnm_log_probability,
    rnm_privacy_loss,
)


def test_lazy_epochs_over_1e5_rounds_charge_every_observation_once():
    T, K, eps = 10**5, 4, 0.5
    rng = np.random.default_rng(11)
    arms = rng.integers(0, K, size=T)
    rewards = (rng.random(T) < np.array([0.2, 0.4, 0.5, 0.7])[arms]).astype(float)
    ledger = Ledger()
    lazy = LazyEpochSums(K, epsilon=eps, rng=rng, ledger=ledger)
    released = lazy.push_many(arms, rewards, units=range(1, T + 1))
    counts = np.bincount(arms, minlength=K)
    # epochs of sizes 1, 2, 4, ...: R complete epochs hold 2^R − 1 observations
    n_epochs = np.floor(np.log2(counts + 1)).astype(int)
    assert len(ledger) == len(released) == n_epochs.sum()
    assert lazy.pending.tolist() == (counts - (2**n_epochs - 1)).tolist()
    assert lazy.epoch_size.tolist() == (2 ** (n_epochs - 1)).tolist()
    charges = ledger.charges()
    assert set(charges.values()) == {1}
    assert len(charges) == T - lazy.pending.sum()
    # the unreleased rounds are exactly each arm's trailing partial epoch
    for j in range(K):
        rounds_j = np.flatnonzero(arms == j) + 1
        tail = rounds_j[2 ** n_epochs[j] - 1 :]
        assert not set(tail.tolist()) & set(charges)
        assert set(rounds_j[: 2 ** n_epochs[j] - 1].tolist()) <= set(charges)
    # released sums are the true epoch sums + noise
    for rel in released[:20]:
        idx = np.asarray(rel.units) - 1
        assert len(idx) == 2**rel.epoch and (arms[idx] == rel.arm).all()
    # total over the run: one Laplace(1/ε) release per unit, parallel across units
    event = ledger.event()
    assert event == LaplaceEvent(scale=1 / eps)
    assert event.epsilon == pytest.approx(eps)
    report = ledger.report(delta=1e-6)
    assert report.bounds["basic"].value == pytest.approx(eps, rel=1e-12)
    assert eps - 1e-4 <= report.best.value <= eps + 1e-12  # PLD: ε minus O(δ) at δ = 1e-6
    assert account(event, epsilon=eps).best.value == 0.0  # pure ε-DP: δ(ε) = 0


def test_push_many_equals_sequential_push():
    rng = np.random.default_rng(3)
    arms = rng.integers(0, 3, size=200)
    xs = rng.random(200)
    a = LazyEpochSums(3, epsilon=1.0, rng=np.random.default_rng(9), size=4)
    b = LazyEpochSums(3, epsilon=1.0, rng=np.random.default_rng(9), size=4)
    ra = a.push_many(arms[:77], xs[:77]) + a.push_many(arms[77:], xs[77:])
    rb = [r for j, x in zip(arms, xs) if (r := b.push(int(j), float(x))) is not None]
    assert [(r.arm, r.epoch, r.units) for r in ra] == [(r.arm, r.epoch, r.units) for r in rb]
    # same noise draws in the same order; sums differ only by float summation order
    np.testing.assert_allclose(np.stack([r.value for r in ra]), np.stack([r.value for r in rb]), rtol=1e-12)
    np.testing.assert_allclose(a.noisy_sum, b.noisy_sum, rtol=1e-12)


@pytest.mark.parametrize("N", list(range(1, 70)))
def test_schedule_effective_count(N):
    # Chandak, Hu & Hegde (2023): after w_0 plus N pulls (N+1 observations), T_e = 2^{floor(log2(N+2)) - 1}
    lazy = LazyEpochSums(1, epsilon=1.0, rng=np.random.default_rng(0))
    lazy.push_many(np.zeros(N + 1, dtype=int), np.ones(N + 1))
    assert lazy.epoch_size[0] == 2 ** (int(np.floor(np.log2(N + 2))) - 1)
    assert len(lazy.releases) == int(np.floor(np.log2(N + 2)))


def test_noisy_epoch_sum_unbiased_with_laplace_variance():
    n, eps = 40000, 0.7
    rng = np.random.default_rng(5)
    lazy = LazyEpochSums(2, epsilon=eps, rng=rng, size=n)
    x = rng.random(7)
    lazy.push_many(np.zeros(7, dtype=int), x)  # epochs of 1, 2, 4 observations
    assert lazy.epoch_size[0] == 4 and np.isnan(lazy.noisy_sum[:, 1]).all()
    err = lazy.noisy_sum[:, 0] - x[3:].sum()
    b = 1 / eps
    z_mean = err.mean() / np.sqrt(2 * b**2 / n)
    z_var = (err.var(ddof=1) - 2 * b**2) / np.sqrt((12 * b**4 + 2 * (2 * b**2) ** 2) / n)
    p = 2 * stats.norm.sf(np.abs([z_mean, z_var]))
    assert p.min() > 1e-3 / 2
    np.testing.assert_allclose(lazy.noisy_mean[:, 0], lazy.noisy_sum[:, 0] / 4)
    # privacy loss of one epoch sum between sums differing by the sensitivity: |loss| <= ε
    loss = lazy.privacy_loss(lazy.noisy_sum[:, 0], x[3:].sum(), x[3:].sum() - 1.0)
    assert np.abs(loss).max() <= eps + 1e-12
    assert loss.max() == pytest.approx(eps, abs=1e-12)


def test_semi_bandit_rounds_compose_over_the_arms_they_touch():
    # Chandak, Hu & Hegde (2023): K = 3 arms observed per round, ε0 = ε/3 per arm release
    eps, K, L, rounds = 1.5, 3, 5, 300
    rng = np.random.default_rng(8)
    ledger = Ledger()
    lazy = LazyEpochSums(L, epsilon=eps / K, rng=rng, ledger=ledger)
    for t in range(rounds):
        chosen = rng.choice(L, size=K, replace=False)
        lazy.push_many(chosen, rng.random(K), units=[t] * K)
    charges = ledger.charges()
    assert max(charges.values()) == K
    full = [t for t, c in charges.items() if c == K]
    assert full
    ev = ledger.event_for(full[0])
    assert isinstance(ev, ComposedEvent) and len(ev.events) == K
    assert sum(e.epsilon for e in ev.events) == pytest.approx(eps)


def test_global_epochs_rnm_each_round_once_and_replace_factor_two():
    eps, K, T = 1.0, 5, 1023  # epochs 0..9 complete exactly
    rng = np.random.default_rng(2)
    X = (rng.random((T, K)) < np.linspace(0.3, 0.7, K)).astype(float)
    ledger = Ledger()
    g = GlobalEpochSums(K, epsilon=eps, rng=rng, ledger=ledger, size=3)
    rels = g.push_many(X[:500]) + g.push_many(X[500:])
    assert [r.epoch for r in rels] == list(range(10))
    assert [len(r.units) for r in rels] == [2**s for s in range(10)]
    assert [r.units[0] for r in rels] == [2**s for s in range(10)]
    assert set(ledger.charges().values()) == {1} and len(ledger.charges()) == T
    assert g.noise_scale == pytest.approx(2 / eps)  # replace, non-monotone: b = 2Δ/ε
    ev = ledger.event()
    assert isinstance(ev, LaplaceReportNoisyMaxEvent) and ev.epsilon == pytest.approx(eps)
    assert rels[-1].value.shape == (3,) and rels[-1].value.dtype.kind == "i"
    assert GlobalEpochSums.epoch_of(1) == 0 and GlobalEpochSums.epoch_of(1023) == 9

    literal = GlobalEpochSums(K, noise_scale=1 / eps, rng=rng)  # the paper's Lap(1/ε)
    assert literal.event.epsilon == pytest.approx(2 * eps)
    mono = GlobalEpochSums(K, epsilon=eps, neighbouring=Neighbouring.ADD_REMOVE, monotone=True, rng=rng)
    assert mono.noise_scale == pytest.approx(1 / eps) and mono.event.epsilon == pytest.approx(eps)
    naive = GlobalEpochSums(K, release="sums", epsilon=eps, rng=rng)
    assert naive.noise_scale == pytest.approx(K / eps) and naive.event.epsilon == pytest.approx(eps)
    out = naive.push_many(X[:3])
    assert out[-1].value.shape == (K,)


def test_rnm_exact_loss_exceeds_paper_claim_under_replace():
    # Hu et al. (2024), Theorem 8 under replace (K = 2, ε = 1, b = 1/ε): worst loss 0.965 at n = 1,
    # 1.882 at n = 16
    assert rnm_privacy_loss(0, [1, 0], [0, 1], 1.0) == pytest.approx(0.9648, abs=1e-3)
    loss16 = rnm_privacy_loss(0, [1, 15], [0, 16], 1.0)
    assert loss16 == pytest.approx(1.882, abs=1e-3)
    assert 1.0 < loss16 < 2.0  # > the claimed ε, < the certified 2ε
    # the calibrated b = 2/ε stays within ε
    assert rnm_privacy_loss(0, [1, 15], [0, 16], 2.0) <= 1.0


def test_rnm_probabilities_match_sampling():
    n = 200000
    rng = np.random.default_rng(12)
    g = GlobalEpochSums(3, noise_scale=1.0, rng=rng, size=n)
    X = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # epoch 0: round 1; epoch 1: rounds 2-3
    rels = g.push_many(X)
    sums = X[1:].sum(axis=0)
    freq = np.bincount(rels[1].value, minlength=3) / n
    probs = np.exp([rnm_log_probability(j, sums, 1.0) for j in range(3)])
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    z = (freq - probs) / np.sqrt(probs * (1 - probs) / n)
    assert np.abs(z).max() < 4.0


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="num_arms"):
        LazyEpochSums(0, epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="exactly one"):
        LazyEpochSums(2, rng=rng)
    lazy = LazyEpochSums(2, epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="arms"):
        lazy.push_many(np.array([0, 2]), np.ones(2))
    with pytest.raises(ValueError, match="finite"):
        lazy.push_many(np.array([0]), np.array([np.inf]))
    with pytest.raises(ValueError, match="units"):
        lazy.push_many(np.array([0, 1]), np.ones(2), units=[1])
    with pytest.raises(ValueError, match="num_actions"):
        GlobalEpochSums(1, epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="release"):
        GlobalEpochSums(3, epsilon=1.0, release="top", rng=rng)
    with pytest.raises(ValueError, match="mu"):
        GlobalEpochSums(3, epsilon=None, rng=rng)
    g = GlobalEpochSums(3, epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="shape"):
        g.push_many(np.ones((4, 2)))
    with pytest.raises(ValueError, match="winner"):
        rnm_log_probability(3, [0.0, 1.0], 1.0)
