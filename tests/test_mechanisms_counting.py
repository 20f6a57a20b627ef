"""Tests for mechanisms.continual.tree and mechanisms.continual.hybrid: tree / hybrid continual counters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.accounting import account
from dpaudit.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    PrivacyEvent,
    SelfComposedEvent,
)
from dpaudit.ledger import Ledger
from mechanisms.continual.hybrid import HybridCounter
from mechanisms.continual.tree import BinaryTreeCounter, tree_charge, tree_levels, tree_node_layout

HORIZONS = [1, 2, 3, 5, 6, 7, 8, 12, 17, 64, 100, 1000]


def pure_eps(ev: PrivacyEvent) -> float:
    """Basic-composition ε of an event tree of Laplace leaves (independent of dpaudit.accounting)."""
    if isinstance(ev, LaplaceEvent):
        return ev.epsilon
    if isinstance(ev, ComposedEvent):
        return sum(pure_eps(e) for e in ev.events)
    if isinstance(ev, SelfComposedEvent):
        return ev.count * pure_eps(ev.event)
    if isinstance(ev, ParallelEvent):
        return max(pure_eps(e) for e in ev.events)
    raise AssertionError(f"unexpected event {ev!r}")


def gdp_mu(ev: PrivacyEvent) -> float:
    if isinstance(ev, GaussianEvent):
        return ev.mu
    if isinstance(ev, ComposedEvent):
        return math.sqrt(sum(gdp_mu(e) ** 2 for e in ev.events))
    if isinstance(ev, ParallelEvent):
        return max(gdp_mu(e) for e in ev.events)
    raise AssertionError(f"unexpected event {ev!r}")


def run(counter, xs):
    return np.stack([counter.step(x) for x in xs], axis=len(counter.size))


# ---------------------------------------------------------------------------------------
# levels and charges


def test_tree_levels_conventions():
    for T in HORIZONS:
        assert tree_levels(T) == math.floor(math.log2(T)) + 1
        assert tree_levels(T, padded=True) == math.ceil(math.log2(T)) + 1


@pytest.mark.parametrize("T", HORIZONS)
def test_full_padded_tree_charges_every_unit_ceil_log2_plus_one(T):
    ledger = Ledger()
    c = BinaryTreeCounter(
        T, epsilon=1.0, tree="full", padded=True, rng=np.random.default_rng(T), ledger=ledger
    )
    for _ in range(T):
        c.step(1.0)
    c.close()
    charges = ledger.charges()
    assert set(charges) == set(range(1, T + 1))
    assert set(charges.values()) == {math.ceil(math.log2(T)) + 1}
    # calibration: every unit composes to exactly ε = 1
    for unit in (1, T, (T + 1) // 2):
        assert pure_eps(ledger.event_for(unit)) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("T", HORIZONS)
def test_full_tree_unpadded_charges_floor_log2_plus_one(T):
    ledger = Ledger()
    c = BinaryTreeCounter(T, epsilon=2.0, tree="full", rng=np.random.default_rng(0), ledger=ledger)
    for _ in range(T):
        c.step(0.5)
    before = ledger.charges()
    assert all(before[p] == tree_charge(p, T, tree="full") for p in range(1, T + 1))
    c.close()
    assert set(ledger.charges().values()) == {math.floor(math.log2(T)) + 1}
    assert pure_eps(ledger.event()) == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("T", HORIZONS)
def test_binary_mechanism_charges_are_exact_and_max_is_levels(T):
    ledger = Ledger()
    c = BinaryTreeCounter(T, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    for _ in range(T):
        c.step(1.0)
    charges = ledger.charges()
    assert len(ledger) == T  # one node per step
    assert [charges[p] for p in range(1, T + 1)] == [tree_charge(p, T) for p in range(1, T + 1)]
    # brute force: releases containing p = blocks (t − 2^lowbit(t), t] with t >= p
    for p in range(1, min(T, 40) + 1):
        brute = sum(1 for t in range(p, T + 1) if t - (t & -t) < p)
        assert charges[p] == brute
    assert max(charges.values()) == charges[1] == math.floor(math.log2(T)) + 1
    assert pure_eps(ledger.event()) == pytest.approx(1.0, rel=1e-12)  # worst unit: exactly ε
    with pytest.raises(ValueError, match="close"):
        c.close()


def test_layout_matches_counter_and_prefix_sums_are_exact_without_noise():
    rng = np.random.default_rng(5)
    xs = rng.random((23, 3))
    for tree in ("binary", "full"):
        c = BinaryTreeCounter(23, shape=(3,), sensitivity=3.0, noise_scale=1e-13, tree=tree, rng=rng)
        out = run(c, xs)
        np.testing.assert_allclose(out, np.cumsum(xs, axis=0), atol=1e-9)
        assert c.layout == tree_node_layout(23, levels=c.levels, tree=tree)
        np.testing.assert_allclose(c.released_values(), c.node_sums(xs), atol=1e-9)
    c.close()
    np.testing.assert_allclose(c.released_values(), c.node_sums(xs, closed=True), atol=1e-9)


def test_chen2020_literal_noise_scale_spends_less_than_claimed():
    # Chen et al. (2020), Alg. 3: per-node Lap(2K log T / ε), K-sparse leaves with l1-sensitivity K
    K, eps, T = 5, 1.0, 10**5
    b = 2 * K * math.log2(T) / eps
    c = BinaryTreeCounter(T, shape=(20,), sensitivity=K, noise_scale=b, tree="full", padded=True,
                          rng=np.random.default_rng(0))
    assert c.levels == 18
    assert c.epsilon_per_unit == pytest.approx(eps * 18 / (2 * math.log2(T)), rel=1e-12)
    assert c.epsilon_per_unit == pytest.approx(0.5418, abs=1e-4)
    # natural-log reading at T = 5 overspends (the paper never fixes the log base)
    c5 = BinaryTreeCounter(5, sensitivity=1, noise_scale=2 * math.log(5), tree="full", padded=True,
                           rng=np.random.default_rng(0))
    assert c5.epsilon_per_unit == pytest.approx(4 / (2 * math.log(5)), rel=1e-12)
    assert c5.epsilon_per_unit > 1.2


@pytest.mark.parametrize("T", [5, 8, 100])
def test_accounting_of_tree_ledger_is_the_claimed_epsilon(T):
    ledger = Ledger()
    rng = np.random.default_rng(0)
    c = BinaryTreeCounter(T, epsilon=0.7, tree="full", padded=True, rng=rng, ledger=ledger)
    for _ in range(T):
        c.step(1.0)
    c.close()
    ev = ledger.event()
    assert ev.num_releases == math.ceil(math.log2(T)) + 1  # all units merge into one branch
    assert account(ev, delta=1e-6, methods=["basic"]).best.value == pytest.approx(0.7, rel=1e-12)
    assert account(ev, epsilon=0.7, methods=["basic"]).best.value == 0.0
    best = account(ev, delta=1e-6, methods=["basic", "rdp"]).best.value
    assert 0.65 <= best <= 0.7 + 1e-12


def test_gaussian_tree_calibration():
    ledger = Ledger()
    c = BinaryTreeCounter(
        12, noise="gaussian", mu=0.5, tree="full", padded=True, rng=np.random.default_rng(0), ledger=ledger
    )
    for _ in range(12):
        c.step(1.0)
    c.close()
    assert c.node_scale == pytest.approx(math.sqrt(5) / 0.5)
    assert c.mu_per_unit == pytest.approx(0.5)
    assert gdp_mu(ledger.event()) == pytest.approx(0.5, rel=1e-12)


# ---------------------------------------------------------------------------------------
# statistics: unbiased, variance as theory


def _check_error_moments(err: np.ndarray, variances: np.ndarray, kurt_cum: np.ndarray, alpha: float = 1e-3):
    """err: (n, T); z-tests for mean 0 and variance, Bonferroni over 2T tests at level alpha."""
    n, T = err.shape
    mean_z = err.mean(axis=0) / np.sqrt(variances / n)
    s2 = err.var(axis=0, ddof=1)
    var_z = (s2 - variances) / np.sqrt((kurt_cum + 2 * variances**2) / n)
    p = 2 * stats.norm.sf(np.abs(np.concatenate([mean_z, var_z])))
    assert p.min() > alpha / (2 * T), (p.min(), np.argmin(p))
    return p.min()


@pytest.mark.parametrize("noise,kw", [("laplace", {"epsilon": 1.0}), ("gaussian", {"mu": 1.0})])
def test_tree_counter_unbiased_with_theoretical_variance(noise, kw):
    T, n = 45, 20000
    rng = np.random.default_rng(2024)
    xs = rng.random(T)
    c = BinaryTreeCounter(T, noise=noise, rng=rng, size=n, **kw)
    err = run(c, xs) - np.cumsum(xs)
    var = np.array([c.noise_variance(t) for t in range(1, T + 1)])
    pops = np.array([bin(t).count("1") for t in range(1, T + 1)])
    k4 = pops * (12 * c.node_scale**4 if noise == "laplace" else 0.0)  # 4th cumulant of a sum of Laplaces
    np.testing.assert_allclose(var, pops * (2 * c.node_scale**2 if noise == "laplace" else c.node_scale**2))
    _check_error_moments(err, var, k4)


def test_hybrid_counter_unbiased_with_theoretical_variance():
    T, n = 40, 20000
    rng = np.random.default_rng(7)
    xs = rng.random((T, 2))
    h = HybridCounter(shape=(2,), sensitivity=2.0, epsilon=1.0, rng=rng, size=n)
    err = run(h, xs) - np.cumsum(xs, axis=0)
    var = np.array([h.noise_variance(t) for t in range(1, T + 1)])
    k4 = []
    for t in range(1, T + 1):
        k = t.bit_length() - 1
        c4 = (k + 1) * 12 * h.log_noise.scale**4
        if t > 1 << k:
            c4 += bin(t - (1 << k)).count("1") * 12 * h.block_noise(k).scale ** 4
        k4.append(c4)
    for d in range(2):
        _check_error_moments(err[:, :, d], var, np.array(k4))


# ---------------------------------------------------------------------------------------
# hybrid privacy bookkeeping


def test_hybrid_charges_and_per_unit_epsilon():
    ledger = Ledger()
    eps = 0.8
    h = HybridCounter(epsilon=eps, rng=np.random.default_rng(1), ledger=ledger)
    T = 100
    units = [1000 + t for t in range(1, T + 1)]
    for t, u in enumerate(units, 1):
        h.step(float(t % 2), unit=u)
    charges = ledger.charges()
    for t, u in enumerate(units[:64], 1):  # blocks up to t = 64 are complete
        assert charges[u] == HybridCounter.charge(t)
        spent = pure_eps(ledger.event_for(u))
        assert spent <= eps * (1 + 1e-12)
        if t > 2 and (t - 1) & (t - 2) == 0:  # t = 2^k + 1, k >= 1: exactly ε
            assert spent == pytest.approx(eps, rel=1e-12)
    assert pure_eps(ledger.event()) == pytest.approx(eps, rel=1e-12)
    # t = 65 sits in 6 completed nodes of B_6 (blocks 65..65+2^j-1 <= 100); its log release
    # (block 65..128) is still pending at T = 100
    assert charges[1065] == 6 == max(charges.values())


def test_hybrid_gaussian_mu_split():
    ledger = Ledger()
    h = HybridCounter(noise="gaussian", mu=1.0, rng=np.random.default_rng(1), ledger=ledger)
    for _ in range(33):
        h.step(1.0)
    assert gdp_mu(ledger.event_for(17)) == pytest.approx(1.0, rel=1e-12)  # 1 log + 4 nodes of B_4
    assert gdp_mu(ledger.event()) <= 1.0 + 1e-12


# ---------------------------------------------------------------------------------------
# privacy loss


def test_tree_privacy_loss_bounded_by_epsilon_and_attained():
    T, n, eps = 16, 20000, 1.0
    x = np.zeros(T)
    x_prime = x.copy()
    x_prime[0] = 1.0  # neighbouring streams: step 1 replaced (sensitivity 1)
    c = BinaryTreeCounter(T, epsilon=eps, rng=np.random.default_rng(3), size=n)
    run(c, x_prime)
    loss = c.privacy_loss(c.released_values(), x_prime, x)
    assert loss.shape == (n,)
    assert loss.max() <= eps + 1e-9
    assert loss.max() == pytest.approx(eps, abs=1e-9)  # each of 5 nodes saturates w.p. 1/2
    assert loss.mean() > 0  # KL divergence
    h = HybridCounter(epsilon=eps, rng=np.random.default_rng(4), size=n)
    x5 = np.zeros(9)
    x5p = x5.copy()
    x5p[4] = 1.0  # step 5 = 2^2 + 1: one log release + 2 block nodes
    run(h, x5p)
    hl = h.privacy_loss(h.released_values(), x5p, x5)
    assert hl.max() == pytest.approx(eps, abs=1e-9)
    assert hl.max() <= eps + 1e-9


# ---------------------------------------------------------------------------------------
# validation


def test_validation_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="exactly one"):
        BinaryTreeCounter(8, rng=rng)
    with pytest.raises(ValueError, match="exactly one"):
        BinaryTreeCounter(8, epsilon=1.0, noise_scale=1.0, rng=rng)
    with pytest.raises(ValueError, match="mu"):
        BinaryTreeCounter(8, noise="gaussian", epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="epsilon"):
        BinaryTreeCounter(8, epsilon=-1.0, rng=rng)
    with pytest.raises(ValueError, match="horizon"):
        BinaryTreeCounter(0, epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="tree"):
        BinaryTreeCounter(8, epsilon=1.0, tree="dense", rng=rng)
    with pytest.raises(ValueError, match="neighbouring"):
        BinaryTreeCounter(8, epsilon=1.0, neighbouring="swap", rng=rng)
    with pytest.raises(ValueError, match="Generator"):
        BinaryTreeCounter(8, epsilon=1.0, rng=0)
    c = BinaryTreeCounter(2, shape=(2,), epsilon=1.0, rng=rng)
    with pytest.raises(ValueError, match="shape"):
        c.step(1.0)
    with pytest.raises(ValueError, match="finite"):
        c.step([np.nan, 0.0])
    c.step([0.0, 1.0])
    c.step([0.0, 1.0])
    with pytest.raises(ValueError, match="horizon"):
        c.step([0.0, 1.0])
    with pytest.raises(ValueError, match="exactly one"):
        HybridCounter(rng=rng)
    with pytest.raises(ValueError, match="sensitivity"):
        HybridCounter(epsilon=1.0, sensitivity=0.0, rng=rng)
    with pytest.raises(ValueError, match="ledger"):
        HybridCounter(epsilon=1.0, rng=rng, ledger=[])


@pytest.mark.parametrize("horizon,tree,padded", [(1, "binary", False), (13, "full", True),
                                                 (16, "full", False), (37, "binary", False),
                                                 (37, "full", True)])
def test_gaussian_tree_counter_is_tree_aggregation(horizon, tree, padded):
    """The counter's ledger (per unit, worst unit) certifies exactly what its tree-aggregation
    event certifies, under every method: a record enters at most ``levels`` nodes, and the event
    of 2^(levels−1) leaves has exactly that many."""
    ledger = Ledger()
    c = BinaryTreeCounter(horizon, noise="gaussian", mu=0.7, tree=tree, padded=padded,
                          rng=np.random.default_rng(1), ledger=ledger)
    for t in range(horizon):
        c.step(1.0, unit=t)
    if tree == "full":
        c.close()
    assert max(ledger.charges().values()) == c.levels == c.aggregation_event.nodes
    ours, tree_event = account(ledger.event(), delta=1e-6), account(c.aggregation_event, delta=1e-6)
    for name in ("gdp", "rdp", "basic", "advanced", "pld"):
        assert ours.bounds[name].value == pytest.approx(tree_event.bounds[name].value, rel=1e-9), name
    assert tree_event.bounds["gdp"].value == pytest.approx(account(GaussianEvent.from_mu(0.7), delta=1e-6)
                                                           .bounds["gdp"].value, rel=1e-9)
    with pytest.raises(ValueError, match="defined for Gaussian noise"):
        _ = BinaryTreeCounter(8, epsilon=1.0, rng=np.random.default_rng(0)).aggregation_event
