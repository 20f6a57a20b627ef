"""Poisson-sampled pure ε-DP releases (Laplace, discrete Laplace, randomized response, any ε-DP):
every method bounds them, never below the exact hockey-stick divergence.

References, independent of the code under test:

* binary randomized response on a Poisson subsample, k-fold: exact, by enumerating how many of
  the k outputs were the "high" outcome (mpmath, 50 digits), both directions;
* the Laplace mechanism on a Poisson subsample, one step: exact, in closed form (the privacy loss
  crosses ε at one point; Laplace CDFs), both directions;
* k-fold sampled Laplace: dp-accounting's *optimistic* PLD (a lower estimate) from below, its
  pessimistic PLD for agreement;
* the pure bound log(1 + q(e^ε − 1)) per step (basic composition) in exact arithmetic.
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import mpmath as mp
import pytest
from dp_accounting.pld import pld_privacy_accountant as pld_acc
from dp_accounting.pld import privacy_loss_distribution as dpa_pld
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account, delta_under, epsilon_under
from dpaudit.events import (
    ApproxDpEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureDpEvent,
    RandomizedResponseEvent,
)
from dpaudit.events_ml import DiscreteLaplaceEvent
from dpaudit.interop import from_dp_accounting, to_dp_accounting

DPS = 50  # mpmath digits, set where used (other modules change the global precision)
METHODS = ("basic", "advanced", "rdp", "gdp", "pld")


def rr_exact_delta(eps0: float, q: float, k: int, eps: float) -> mp.mpf:
    """δ(ε) of k-fold binary randomized response (ε0) on a Poisson subsample of rate q, the larger
    of the two directions."""
    with mp.workdps(DPS):
        return +_rr_exact_delta(eps0, q, k, eps)


def _rr_exact_delta(eps0: float, q: float, k: int, eps: float) -> mp.mpf:
    e0, q, eps = mp.mpf(eps0), mp.mpf(q), mp.mpf(eps)
    p = mp.e**e0 / (1 + mp.e**e0)
    a = (p, 1 - p)  # without the record
    m = ((1 - q) * p + q * (1 - p), (1 - q) * (1 - p) + q * p)  # with it, sampled w.p. q
    out = []
    for x, y in ((m, a), (a, m)):
        total = mp.mpf(0)
        for j in range(k + 1):
            c = mp.binomial(k, j)
            xj, yj = c * x[1] ** j * x[0] ** (k - j), c * y[1] ** j * y[0] ** (k - j)
            total += max(mp.mpf(0), xj - mp.e**eps * yj)
        out.append(total)
    return max(out)


def laplace_exact_delta(b: float, q: float, eps: float) -> mp.mpf:
    """δ(ε) of one Laplace release (scale b, sensitivity 1) on a Poisson subsample of rate q, the
    larger direction, in closed form (ε ≥ 0). The likelihood ratio Lap(1, b)/Lap(0, b) is
    r(o) = e^{(|o| − |o − 1|)/b}, increasing from e^{−1/b} to e^{1/b} on [0, 1]."""
    with mp.workdps(DPS):
        return +_laplace_exact_delta(b, q, eps)


def _laplace_exact_delta(b: float, q: float, eps: float) -> mp.mpf:
    b, q, eps = mp.mpf(b), mp.mpf(q), mp.mpf(eps)
    top = mp.e ** (1 / b)

    def crossing(r):  # r(o) = r on [0, 1]
        return (b * mp.log(r) + 1) / 2

    remove = mp.mpf(0)  # X = (1 − q)L0 + qL1 against e^ε L0 on {r > R}
    big_r = (mp.e**eps - 1 + q) / q
    if big_r < top:
        o = crossing(big_r)
        s0, s1 = mp.e ** (-o / b) / 2, 1 - mp.e ** ((o - 1) / b) / 2
        remove = (1 - q) * s0 + q * s1 - mp.e**eps * s0
    add = mp.mpf(0)  # X = L0 against e^ε((1 − q)L0 + qL1) on {r < R'}
    small_r = (mp.e ** (-eps) - 1 + q) / q
    if small_r > 1 / top:
        o = crossing(small_r)
        f0, f1 = 1 - mp.e ** (-o / b) / 2, mp.e ** ((o - 1) / b) / 2
        add = f0 - mp.e**eps * ((1 - q) * f0 + q * f1)
    return max(remove, add)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(log_e0=st.floats(-2.0, 1.0), log_q=st.floats(-3.0, -0.05), k=st.integers(1, 40),
       frac=st.floats(0.05, 1.0))
def test_sampled_randomized_response_never_below_exact(log_e0, log_q, k, frac):
    """Every method's δ at ε, and ε at δ, against the exact k-fold divergence of sampled binary
    randomized response (the dominating pair of any sampled ε-DP release); PLD within 1e-3 + 1 %."""
    e0, q = 10.0**log_e0, 10.0**log_q
    event = PoissonSampledEvent(q, RandomizedResponseEvent(e0)).repeat(k)
    eps = frac * k * e0
    for method in METHODS:
        d = delta_under(method, event, eps)
        assert mp.mpf(d) >= rr_exact_delta(e0, q, k, eps), (method, d)
    exact = rr_exact_delta(e0, q, k, eps)
    if 1e-12 < exact < 0.5:  # ε at the exact δ is at least ε; PLD's is close to it
        for method in METHODS:
            assert epsilon_under(method, event, float(exact) * (1 - 1e-9)) >= eps * (1 - 1e-12), method
        assert epsilon_under("pld", event, float(exact) * (1 + 1e-9)) <= eps * 1.01 + 1e-3


@pytest.mark.parametrize("b", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("q", [0.001, 0.05, 0.5, 0.99])
def test_sampled_laplace_one_step_never_below_exact(b, q):
    """One sampled Laplace release: δ at ε from every method, at six ε, against the closed form."""
    event = PoissonSampledEvent(q, LaplaceEvent(scale=b))
    e_prime = math.log1p(q * math.expm1(1.0 / b))
    for eps in (0.0, 0.1 * e_prime, 0.5 * e_prime, 0.9 * e_prime, e_prime, 2 * e_prime):
        exact = laplace_exact_delta(b, q, eps)
        for method in METHODS:
            assert mp.mpf(delta_under(method, event, eps)) >= exact, (method, eps)
        assert delta_under("pld", event, eps) <= exact + 2e-4  # two grid steps (Δ = 1e-4)


@pytest.mark.parametrize("q,b,k,delta", [(0.01, 1.0, 1000, 1e-6), (0.1, 0.5, 100, 1e-5),
                                         (0.5, 2.0, 50, 1e-6), (0.001, 0.2, 10_000, 1e-6)])
def test_sampled_laplace_composition_matches_dp_accounting(q, b, k, delta):
    """k-fold: our PLD's ε never below dp-accounting's optimistic PLD (a lower estimate), within
    1.001× of its pessimistic PLD, and below every other method."""
    event = PoissonSampledEvent(q, LaplaceEvent(scale=b)).repeat(k)
    ours = epsilon_under("pld", event, delta)
    acc = pld_acc.PLDAccountant()
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.LaplaceDpEvent(b)), k)
    theirs = acc.get_epsilon(delta)
    low = dpa_pld.from_laplace_mechanism(b, pessimistic_estimate=False, sampling_prob=q,
                                         value_discretization_interval=1e-4).self_compose(k)
    assert low.get_epsilon_for_delta(delta) <= ours <= theirs * 1.001
    report = account(event, delta=delta)
    assert report.best.value == pytest.approx(ours)
    assert all(report.bounds[m].value >= ours for m in ("basic", "advanced", "rdp", "gdp"))


@pytest.mark.slow
def test_pure_bound_is_the_amplified_epsilon():
    """Basic composition: k·log(1 + q(e^ε − 1)), rounded up, for every sampled pure inner event;
    q = 1 is the inner event under every method."""
    q, k = 0.03, 77
    inners = [LaplaceEvent(scale=0.5), PureDpEvent(2.0), RandomizedResponseEvent(2.0, 5),
              DiscreteLaplaceEvent(0.5, 4)]
    for inner in inners:
        event = PoissonSampledEvent(q, inner).repeat(k)
        with mp.workdps(DPS):
            exact = k * mp.log(1 + mp.mpf(q) * mp.expm1(2))
        basic = epsilon_under("basic", event, 1e-6)
        assert exact <= basic <= exact * (1 + 1e-12), inner
        full = PoissonSampledEvent(1.0, inner).repeat(k)
        for method in METHODS:
            assert epsilon_under(method, full, 1e-6) == pytest.approx(
                epsilon_under(method, inner.repeat(k), 1e-6), rel=1e-9), (method, inner)


def test_sampled_pld_is_tighter_than_randomized_response_of_the_amplified_epsilon():
    """The sampled pair is used, not randomized response at log(1 + q(e^ε − 1)): tighter."""
    q, e0, k = 0.01, 1.0, 1000
    sampled = epsilon_under("pld", PoissonSampledEvent(q, PureDpEvent(e0)).repeat(k), 1e-6)
    amplified = epsilon_under("pld", PureDpEvent(math.log1p(q * math.expm1(e0))).repeat(k), 1e-6)
    assert sampled < 0.95 * amplified


def test_interop_both_ways():
    for theirs in (dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(2.0)),
                   dpa.PoissonSampledDpEvent(0.2, dpa.dp_event.DiscreteLaplaceDpEvent(0.5, 3))):
        ours = from_dp_accounting(theirs)
        assert isinstance(ours, PoissonSampledEvent)
        assert to_dp_accounting(ours) == theirs
    assert from_dp_accounting(dpa.PoissonSampledDpEvent(0.0, dpa.LaplaceDpEvent(2.0))).num_releases == 0
    with pytest.raises(ValueError, match="PoissonSampledDpEvent of RandomizedResponseDpEvent"):
        from_dp_accounting(dpa.PoissonSampledDpEvent(0.1, dpa.RandomizedResponseDpEvent(0.5, 2)))


def test_validation_names_the_event():
    with pytest.raises(ValueError, match="event must be a GaussianEvent or a pure epsilon-DP.*ApproxDpEvent"):
        PoissonSampledEvent(0.5, ApproxDpEvent(1.0, 1e-6))
    with pytest.raises(ValueError, match="no Gaussian parameters"):
        _ = PoissonSampledEvent(0.5, LaplaceEvent(1.0)).noise_multiplier
    assert PoissonSampledEvent(0.5, GaussianEvent(2.0)).noise_multiplier == 2.0


def test_sampled_randomized_response_keeps_the_small_outcome_mass():
    """At a large ε the outcome of probability 1 − p ≈ e^{−ε} must keep its mass (computed as
    1/(1 + e^ε), not 1 − p, which cancels to 0): δ stays at least the exact value."""
    from dpaudit.accounting.pld_steps import sampled_randomized_response_pmfs

    for e0 in (20.0, 40.0, 800.0):
        remove, add = sampled_randomized_response_pmfs(e0, 0.5, 1e-2)
        lowest = add.probs[0]  # the add direction's atom at −log(1 + q(e^ε − 1)), mass 1 − p
        assert lowest >= mp.mpf(1) / (1 + mp.e ** mp.mpf(e0)) and lowest > 0, e0
        assert remove.probs.sum() >= 1.0 and add.probs.sum() >= 1.0, e0
    event = PoissonSampledEvent(0.5, RandomizedResponseEvent(40.0)).repeat(3)
    for eps in (0.0, 30.0, 60.0):
        assert mp.mpf(delta_under("pld", event, eps)) >= rr_exact_delta(40.0, 0.5, 3, eps), eps
