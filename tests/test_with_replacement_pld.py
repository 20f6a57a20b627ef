"""The PLD of a Gaussian on a batch drawn with replacement, against the exact divergence of the
pair it bounds.

Reference (mpmath, independent of the code): the pair that reveals the record's number of copies
C_i ~ Binomial(m, 1/n) at each of k steps is, given (C_1..C_k), a Gaussian pair of
μ·sqrt(Σ C_i²); its hockey-stick divergence is E[δ_Gauss(μ·sqrt(S), ε)], S = Σ C_i², whose law is
the k-fold convolution of the law of C². The PLD must never be below it, and (being the PLD of
that pair) must be close to it.
"""

from __future__ import annotations

from collections import defaultdict

import mpmath as mp
import pytest

from dpaudit.accounting import account, delta_under, epsilon_under
from dpaudit.accounting.pld_with_replacement import copy_weights
from dpaudit.events import GaussianEvent
from dpaudit.events_ml import SampledWithoutReplacementEvent, SampledWithReplacementEvent

DPS = 40  # mpmath digits, set per test (other modules change the global precision)


def gaussian_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    if mu == 0:
        return mp.mpf(0) if eps >= 0 else 1 - mp.e**eps
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def revealed_delta(n: int, m: int, sigma: float, k: int, eps: float) -> mp.mpf:
    law = {c * c: mp.binomial(m, c) * mp.mpf(1) / n**c * (1 - mp.mpf(1) / n) ** (m - c) for c in range(m + 1)}
    total: dict[int, mp.mpf] = {0: mp.mpf(1)}
    for _ in range(k):
        nxt: dict[int, mp.mpf] = defaultdict(lambda: mp.mpf(0))
        for s, p in total.items():
            for c2, w in law.items():
                nxt[s + c2] += p * w
        total = nxt
    mu = 1 / mp.mpf(sigma)
    return mp.fsum(p * gaussian_delta(mu * mp.sqrt(s), mp.mpf(eps)) for s, p in total.items())


CASES = [(10, 2, 1.0, 1), (50, 3, 0.8, 5), (1000, 10, 1.0, 1), (20, 4, 2.0, 20), (200, 5, 0.5, 3)]


@pytest.mark.slow
@pytest.mark.parametrize("n,m,sigma,k", CASES)
def test_pld_never_below_the_revealed_pair_and_close_to_it(n, m, sigma, k):
    with mp.workdps(DPS):
        _check_revealed(n, m, sigma, k)


def _check_revealed(n, m, sigma, k):
    event = SampledWithReplacementEvent(n, m, GaussianEvent(sigma=sigma)).repeat(k)
    ours = {d: epsilon_under("pld", event, d) for d in (1e-3, 1e-6)}
    for d, eps in ours.items():
        exact = revealed_delta(n, m, sigma, k, eps)
        assert exact <= d * (1 + 1e-9), (d, eps, exact)  # certified ε: the exact δ there is ≤ d
        assert revealed_delta(n, m, sigma, k, eps * 0.99 - 0.01) >= d * 0.999 or eps < 0.02  # tight
        for frac in (0.25, 0.5, 1.0):
            assert mp.mpf(delta_under("pld", event, frac * eps)) >= revealed_delta(n, m, sigma, k, frac * eps)


def test_pld_is_below_the_rdp_and_above_sampling_without_replacement():
    """The docs' example: B = 10 of N = 1000 at σ = 1, one step, δ = 1e-5."""
    wr = account(SampledWithReplacementEvent(1000, 10, GaussianEvent(sigma=1.0)), delta=1e-5)
    wor = account(SampledWithoutReplacementEvent(1000, 10, GaussianEvent(sigma=1.0)), delta=1e-5)
    assert wor.best.value < wr.bounds["pld"].value < 0.3 * wr.bounds["rdp"].value
    assert wr.best.method == "pld"


def test_one_record_is_the_gaussian_of_m_copies():
    event = SampledWithReplacementEvent(1, 4, GaussianEvent(sigma=8.0)).repeat(10)
    same = GaussianEvent(sigma=8.0, sensitivity=4.0).repeat(10)
    assert epsilon_under("pld", event, 1e-6) == pytest.approx(epsilon_under("gdp", same, 1e-6), rel=1e-3)
    assert epsilon_under("pld", event, 1e-6) >= epsilon_under("gdp", same, 1e-6)


def test_copy_weights_are_rounded_up_and_the_tail_bounded():
    with mp.workdps(DPS):
        for n, m, sigma in [(1000, 10, 1.0), (60000, 256, 1.0), (100, 100, 0.5), (10**6, 10**6, 0.05)]:
            zero, parts, tail = copy_weights(SampledWithReplacementEvent(n, m, GaussianEvent(sigma=sigma)))
            p = mp.mpf(1) / n

            def pmf(c, m=m, p=p):
                return mp.binomial(m, c) * p**c * (1 - p) ** (m - c)

            assert zero >= (1 - p) ** m
            for w, c in parts:
                assert w >= pmf(c) and c / sigma <= 20
            last = parts[-1][1] if parts else 0
            # P(C > K) summed term by term (no cancellation); the far terms are below 1e-300
            exact_tail = mp.fsum(pmf(c) for c in range(last + 1, min(m, last + 400) + 1))
            assert tail >= exact_tail
            assert zero + sum(w for w, _ in parts) + tail >= 1 - 1e-15


def test_outside_the_domain_says_why():
    report = account(SampledWithReplacementEvent(100, 10, GaussianEvent(sigma=0.01)), delta=1e-5)
    assert not report.bounds["pld"].applicable
    assert "per copy" in report.bounds["pld"].reason and "PLD domain" in report.bounds["pld"].reason
