"""Tests for mechanisms.local: client-side randomizers of Wang et al. (2021) and Chen et al. (2020)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.events import GaussianEvent, LaplaceEvent
from dpaudit.ledger import Ledger
from mechanisms.local import (
    CascadeClickRandomizer,
    GaussianVectorRandomizer,
    LaplaceVectorRandomizer,
    LeastPulledLaplaceRandomizer,
    classical_gaussian_sigma,
)

# ---------------------------------------------------------------------------------------
# Wang et al. (2021), Algorithms 2-3, as specified


@pytest.mark.parametrize("K", [1, 2, 4])
def test_cascade_alg2_sends_min_click_K_values(K):
    rng = np.random.default_rng(0)
    r = CascadeClickRandomizer.alg2(K, epsilon=1.0)
    for c in list(range(1, K + 1)) + [None, math.inf, K + 3]:
        y = r.sample(c, rng, size=5)
        expected = K if (c is None or c > K) else c
        assert y.shape == (5, expected) == (5, r.num_values(c))
        v = r.values(c)
        assert v.sum() == (0 if expected == K and (c is None or c > K) else 1)
    assert r.scale == K / 1.0
    assert r.event == LaplaceEvent(scale=K, sensitivity=K) and r.event.epsilon == pytest.approx(1.0)
    assert r.leaks_length == (K >= 2)


def test_cascade_length_leak_is_perfectly_distinguishing():
    rng = np.random.default_rng(1)
    r = CascadeClickRandomizer.alg2(4, epsilon=1.0)
    n = 2000
    y1 = r.sample(1, rng, size=n)  # click at position 1: one value
    y_none = r.sample(None, rng, size=n)  # no click: four values
    # the event "one value was sent" has probability 1 vs 0: not (ε, δ)-LDP for any δ < 1
    assert y1.shape[-1] == 1 and y_none.shape[-1] == 4
    assert np.all(r.privacy_loss(y1, 1, None) == np.inf)
    assert np.all(r.privacy_loss(y_none, 1, None) == -np.inf)
    # with equal lengths (C = K vs no click) the noise does protect: |loss| <= 1/b = ε/K
    yk = r.sample(4, rng, size=n)
    loss = r.privacy_loss(yk, 4, None)
    assert np.abs(loss).max() <= 0.25 + 1e-12
    assert loss.max() == pytest.approx(0.25, abs=1e-12)


def test_cascade_fixed_length_variant_is_sound():
    rng = np.random.default_rng(2)
    eps, K = 1.0, 4
    r = CascadeClickRandomizer(K, "laplace", 2 / eps, report="all-positions")
    assert not r.leaks_length and r.sensitivity == 2.0 and r.event.epsilon == pytest.approx(eps)
    y = r.sample(1, rng, size=50000)
    assert y.shape == (50000, K)
    worst = -np.inf
    for c, c2 in [(1, 2), (1, None), (3, None), (2, 4)]:
        loss = r.privacy_loss(y, c, c2)
        assert loss.max() <= eps + 1e-12
        worst = max(worst, loss.max())
    assert worst == pytest.approx(eps, abs=1e-12)  # one-hot 1 vs 2: both coordinates saturate


def test_cascade_alg3_gaussian_scale_and_event():
    r = CascadeClickRandomizer.alg3(4, epsilon=1.0, delta=1e-3)
    assert r.scale == pytest.approx(math.sqrt(2 * 4 * math.log(1250)), rel=1e-12)
    assert r.scale == pytest.approx(7.5530, abs=1e-3)
    assert r.event == GaussianEvent(sigma=r.scale, sensitivity=2.0)
    y = r.sample(2, np.random.default_rng(0), size=3)
    assert y.shape == (3, 2)
    assert classical_gaussian_sigma(0.2, 1e-3, 2.0) == pytest.approx(37.765, abs=1e-3)


def test_cascade_release_records_one_event_per_user():
    ledger = Ledger()
    rng = np.random.default_rng(3)
    r = CascadeClickRandomizer.alg2(3, epsilon=0.5)
    for user, click in enumerate([1, None, 2, 3]):
        r.release(click, rng, ledger, units=[user], round=user)
    assert ledger.charges() == {0: 1, 1: 1, 2: 1, 3: 1}
    assert ledger.event() == LaplaceEvent(scale=6.0, sensitivity=3.0)
    assert ledger.event().epsilon == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------
# vector randomizers


def test_laplace_vector_tight_on_orthant_event():
    # Chen et al. (2020), Thm 1: x = 0, x' = 1 (K coords), b = K/ε, event {all y >= 1}
    K, eps, n = 2, 1.0, 400000
    r = LaplaceVectorRandomizer.from_epsilon(eps, sensitivity=K, domain=(0.0, 1.0))
    rng = np.random.default_rng(4)
    y1 = r.sample(np.ones(K), rng, size=n)
    y0 = r.sample(np.zeros(K), rng, size=n)
    p1 = np.mean(np.all(y1 >= 1, axis=-1))
    p0 = np.mean(np.all(y0 >= 1, axis=-1))
    assert p1 == pytest.approx(2.0**-K, rel=0.02)
    assert p0 == pytest.approx((0.5 * math.exp(-1 / r.scale)) ** K, rel=0.03)
    assert math.log(p1 / p0) == pytest.approx(eps, abs=0.06)
    loss = r.privacy_loss(y1, np.ones(K), np.zeros(K))
    assert loss.shape == (n,) and loss.max() == pytest.approx(eps, abs=1e-12) and loss.max() <= eps + 1e-12
    assert r.event == LaplaceEvent(scale=K / eps, sensitivity=K)


def test_laplace_vector_validates_sensitivity_against_domain():
    r = LaplaceVectorRandomizer.from_epsilon(1.0, sensitivity=2.0, domain=(0.0, 1.0))
    r.sample(np.zeros(2), np.random.default_rng(0))
    with pytest.raises(ValueError, match="diameter"):
        r.sample(np.zeros(3), np.random.default_rng(0))
    with pytest.raises(ValueError, match="domain"):
        r.sample(np.array([0.0, 1.5]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="Generator"):
        r.sample(np.zeros(2), 3)
    with pytest.raises(ValueError, match="scale"):
        LaplaceVectorRandomizer(scale=0.0)
    with pytest.raises(ValueError, match="norm"):
        LaplaceVectorRandomizer(scale=1.0, norm="l2")
    with pytest.raises(ValueError, match="neighbouring"):
        LaplaceVectorRandomizer(scale=1.0, neighbouring="swap")
    with pytest.raises(ValueError, match="domain"):
        LaplaceVectorRandomizer(scale=1.0, domain=(1.0, 0.0))


def test_gaussian_vector_privacy_loss_distribution():
    # under x, the privacy loss against x' is N(μ²/2, μ²) with μ = ||x − x'||₂ / σ
    K, eps, delta, n = 4, 1.0, 1e-3, 100000
    r = GaussianVectorRandomizer.classical(eps, delta, l2_sensitivity=math.sqrt(K), domain=(0.0, 1.0))
    # Wang et al. (2021), Alg. 4
    assert r.sigma == pytest.approx(math.sqrt(2 * K * math.log(1.25 / delta)) / eps)
    assert r.event == GaussianEvent(sigma=r.sigma, sensitivity=2.0)
    rng = np.random.default_rng(6)
    x, xp = np.ones(K), np.zeros(K)
    y = r.sample(x, rng, size=n)
    err = y - x
    assert abs(err.mean()) < 4 * r.sigma / math.sqrt(n * K)
    loss = r.privacy_loss(y, x, xp)
    mu = r.mu
    z_mean = (loss.mean() - mu**2 / 2) / (mu / math.sqrt(n))
    z_var = (loss.var(ddof=1) - mu**2) / (mu**2 * math.sqrt(2 / n))
    assert 2 * stats.norm.sf(abs(z_mean)) > 1e-3 / 2
    assert 2 * stats.norm.sf(abs(z_var)) > 1e-3 / 2
    with pytest.raises(ValueError, match="diameter"):
        GaussianVectorRandomizer(sigma=1.0, sensitivity=1.0, domain=(0.0, 1.0)).sample(np.zeros(2), rng)


# ---------------------------------------------------------------------------------------
# Chen et al. (2020), CUCB-LDP2


def test_least_pulled_select_and_report():
    r = LeastPulledLaplaceRandomizer.from_epsilon(0.5)
    counts = np.array([3, 1, 1, 0, 7])
    assert r.select([0, 1, 2], counts) == 1  # tie 1 vs 2 -> smaller index
    assert r.select([4, 3, 0], counts) == 3
    ledger = Ledger()
    rng = np.random.default_rng(7)
    i, y = r.report({0: 1.0, 1: 0.0, 2: 1.0}, [0, 1, 2], counts, rng, ledger, unit=42, size=10)
    assert i == 1 and y.shape == (10,)
    assert ledger.charges() == {42: 1}
    assert ledger.entries[0].arm == 1
    assert ledger.event() == LaplaceEvent(scale=2.0) and ledger.event().epsilon == pytest.approx(0.5)
    with pytest.raises(ValueError, match="super_arm"):
        r.select([], counts)
    with pytest.raises(ValueError, match="scalar"):
        r.sample(np.ones(2), rng)
    with pytest.raises(ValueError, match="domain"):
        r.sample(2.0, rng)
    with pytest.raises(ValueError, match="width"):
        LeastPulledLaplaceRandomizer(scale=1.0, sensitivity=0.5)


def test_least_pulled_theorem3_tightness():
    # P(Y >= 1 | x = 1) / P(Y >= 1 | x = 0) = e^ε exactly
    eps, n = 1.0, 400000
    r = LeastPulledLaplaceRandomizer.from_epsilon(eps)
    rng = np.random.default_rng(8)
    p1 = np.mean(r.sample(1.0, rng, size=n) >= 1)
    p0 = np.mean(r.sample(0.0, rng, size=n) >= 1)
    assert math.log(p1 / p0) == pytest.approx(eps, abs=0.03)
    assert r.privacy_loss(5.0, 1.0, 0.0) == pytest.approx(eps)
    assert r.privacy_loss(-5.0, 1.0, 0.0) == pytest.approx(-eps)


@pytest.mark.parametrize("make", [lambda: LaplaceVectorRandomizer(scale=1.0, sensitivity=1.0),
                                  lambda: GaussianVectorRandomizer(sigma=1.0, sensitivity=1.0)])
def test_vector_randomizer_privacy_loss_requires_neighbours(make):
    r = make()
    y = np.zeros((5, 2))
    assert r.privacy_loss(y, np.zeros(2), np.array([0.5, 0.5])).shape == (5,)  # within 1 in l1 and l2
    with pytest.raises(ValueError, match="not neighbours"):
        r.privacy_loss(y, np.zeros(2), np.array([1.0, 1.0]))  # 2 in l1, 1.41 in l2
    with pytest.raises(ValueError, match="shape"):
        r.privacy_loss(y, np.zeros(2), np.zeros(3))
