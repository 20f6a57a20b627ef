"""The PLD's k-fold composition by FFT: only the frequencies that matter are raised, double precision
only where its error fits the caller's budget, and each stated error bound holds against a reference
computed in long double over every frequency (the construction before either shortcut)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.fft

from dpaudit.accounting import account, normal_form
from dpaudit.accounting import pld as pld_method
from dpaudit.accounting.calibration import dpsgd_event
from dpaudit.accounting.pld_pmf import Pmf, power_bound, self_compose, self_convolve_bounds
from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs
from dpaudit.events import GaussianEvent, ParallelEvent, RandomizedResponseEvent

_LD = np.longdouble


def _reference(p: Pmf, k: int) -> np.ndarray:
    """Every frequency raised to the k-th power in long double, inverted in long double."""
    lo, hi = self_convolve_bounds(p.probs, k, 1e-15)
    n = scipy.fft.next_fast_len(max(hi - lo + 1, p.probs.size))
    z = scipy.fft.irfft(scipy.fft.rfft(p.probs.astype(_LD), n) ** k, n)
    return np.maximum(np.roll(z, -lo)[: hi - lo + 1], 0).astype(float)


@pytest.mark.parametrize(("sigma", "q", "k"), [(1.0, 0.01, 10**4), (2.0, 0.001, 10**5), (0.8, 0.1, 300)])
def test_raising_only_the_low_frequencies_stays_within_the_stated_error(sigma, q, k):
    p = sampled_gaussian_pmfs(sigma, q, 1e-3)[0]
    exact = _reference(p, k)
    sparse = self_compose(p, k, max_points=10**7)  # budget 0: long double
    assert not sparse.double and sparse.probs.size == exact.size
    gap = float(np.sqrt(np.sum((sparse.probs - exact) ** 2)))
    assert gap <= sparse.err  # the reference's own error is far below: 5e-20 vs err >= 1e-18
    assert sparse.err < 1e-12
    n = scipy.fft.next_fast_len(sparse.probs.size)
    _, keep = power_bound(scipy.fft.rfft(p.probs.astype(_LD), n), k, n, 2.0**-64, p)
    assert 0 < keep.sum() < 0.1 * keep.size  # only a few frequencies survive a k-th power


def test_double_precision_only_where_its_error_fits_the_budget():
    p = sampled_gaussian_pmfs(1.0, 0.01, 1e-3)[0]
    k = 1000
    precise = self_compose(p, k, max_points=10**7, budget=0.0)
    loose = self_compose(p, k, max_points=10**7, budget=1.0)
    assert loose.double and not precise.double
    assert precise.err < loose.err <= 1.0 / 2 + 1e-15  # the power's share of the budget is half
    gap = float(np.sqrt(np.sum((loose.probs - precise.probs) ** 2)))
    assert gap <= loose.err + precise.err
    tight = self_compose(p, k, max_points=10**7, budget=loose.err / 1e3)  # double cannot meet it
    assert not tight.double and tight.err == precise.err


def test_a_query_rebuilds_in_long_double_when_the_double_floor_would_cost_more_than_1e6_of_delta():
    comp = normal_form(dpsgd_event(0.01, 1.0, 1000))[0]
    cert = pld_method._Certified(comp)
    assert cert.pmfs is None  # built at the first query, for its delta
    loose = cert.epsilon(0.5)  # a large delta tolerates double precision
    assert any(p.double for p in cert.pmfs)
    tight = cert.epsilon(1e-5)
    assert not any(p.double for p in cert.pmfs) and cert.eta <= 1e-6 * 1e-5
    assert tight > loose
    # the same answers as a composition queried at 1e-5 first
    fresh = pld_method._Certified(comp)
    assert fresh.epsilon(1e-5) == tight


def test_the_inverse_transform_runs_in_long_double_where_double_would_raise_the_floor():
    """Two randomized-response steps on a 4·10⁴-point grid: a double inverse errs by ~6e-15 in ℓ₂,
    a floor of 1.2e-12 after the √L factor, so δ = 1e-12 was refused; in long double it answers
    (2 steps of ε₀ = 1: ε = 2 at δ → 0)."""
    rr2 = RandomizedResponseEvent(1.0, 2).repeat(2)
    for event in (rr2, ParallelEvent((GaussianEvent(sigma=1.0), rr2))):
        cert = pld_method._Certified(normal_form(event)[0])
        eps = cert.epsilon(1e-12)
        assert cert.eta < 1e-13 and not math.isnan(eps)
    assert 2.0 - 1e-9 < account(rr2, delta=1e-12, methods=["pld"]).bounds["pld"].value <= 2.0 + 1e-9


def test_the_subsampled_grid_is_sized_by_its_probed_window_not_the_width_estimate():
    """q = 0.1, sigma = 0.8, 10^6 steps: the width estimate (mu_clt^2 + 20 mu_clt = 41,618) spans the
    loss from 0 to past its mean, the composition needs ~3,100: Delta 0.0019 instead of 0.0208,
    and epsilon within 1e-3 of dp-accounting's pessimistic PLD (14284.578303 at Delta = 1e-4, 2.9 GB)
    and above its optimistic one (14234.577709; both from `python benchmarks/bench_dpsgd.py
    --cells 27 --peers dpa_pld dpa_pld_low`)."""
    plan = pld_method.plan(normal_form(dpsgd_event(0.1, 0.8, 10**6))[0])
    assert plan["interval"] < 0.0025 and plan["width"] < 5000
    eps = account(dpsgd_event(0.1, 0.8, 10**6), delta=1e-5, methods=["pld"]).bounds["pld"].value
    assert 14234.577709 <= eps <= 1.001 * 14284.578303
