"""The accountant against exact answers: closed forms, the mpmath oracle, published values.

Cross-checks against other libraries are in ``test_accounting_crosscheck.py``; property tests
(monotonicity, round trips, parallel composition, soundness) in
``test_accounting_properties.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account, delta_under, epsilon_under, normal_form
from dpaudit.accounting import pld as pld_method
from dpaudit.conversions import gdp_epsilon
from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    ParallelEvent,
)
from tests.mp_reference import epsilon_mp

# ---------------------------------------------------------------------------------------
# Ou, Avella Medina & Cummings (2024), Appendix D


@pytest.mark.parametrize(
    ("mu", "paper", "exact"),
    [(1.0, 4.88, 4.886554117), (5.0, 35.57, 35.566343714), (10.0, 96.71, 96.717271964)],
)
def test_appendix_d_through_account(mu, paper, exact):
    bound = account(GaussianEvent.from_mu(mu), delta=1e-6).bounds["gdp"]
    assert bound.applicable
    assert bound.value == pytest.approx(exact, rel=1e-9)
    assert bound.value >= float(epsilon_mp(mu, 1e-6))  # certified: never below the exact ε
    # the paper prints 2 decimals, sometimes truncated (96.717 → 96.71), sometimes rounded
    # (35.566 → 35.57); either way it is within 0.01 of the certified value
    assert abs(bound.value - paper) < 0.01


# ---------------------------------------------------------------------------------------
# exact Gaussian composition: GDP is exact, PLD within its discretisation error

# PLD tolerance. dp-accounting's pessimistic PLD rounds every privacy loss *up* to the grid
# (interval Δ = 1e-4 unless the loss range needs more than the grid budget, see
# dpaudit.accounting.pld.plan); the
# rounded loss is dominated by the true loss shifted by Δ, so ε_PLD(δ) ≤ ε_exact(δ) + Δ (plus
# the truncated tail mass e^{-50} ≪ δ, which moves ε by far less). We allow 3Δ. From below,
# pessimistic rounding gives ε_PLD ≥ ε_exact mathematically, and dpaudit's PLD adds margins for
# the floating-point error of the FFT and of the loss grid (pld module docstring), so the
# certified value must never be below the exact one.
PLD_BELOW = 0.0


def _interval(event) -> float:
    return max(pld_method.plan(c)["interval"] for c in normal_form(event))


@pytest.mark.parametrize(
    ("sigma", "k"), [(0.8, 1), (2.0, 10), (2.0, 100), (10.0, 1000), (30.0, 10**5), (1.0, 50)]
)
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_gaussian_composition_exact_gdp_and_pld(sigma, k, delta):
    event = GaussianEvent(sigma=sigma).repeat(k)
    mu = math.sqrt(k) / sigma
    exact = float(epsilon_mp(mu, delta))
    report = account(event, delta=delta, methods=["gdp", "pld"])
    assert report.mu == pytest.approx(mu, rel=1e-14)
    g = report.bounds["gdp"].value
    assert exact <= g <= exact * (1 + 1e-9) + 1e-12
    p = report.bounds["pld"].value
    interval = _interval(event)
    assert p >= exact - PLD_BELOW
    assert p - exact <= 3 * interval


def test_gaussian_composition_heterogeneous_is_exact():
    # mixed σ and a Gaussian sequence: μ² adds up exactly
    seq = np.linspace(0.01, 0.05, 500)
    event = ComposedEvent(
        (GaussianEvent(sigma=3.0).repeat(20), GaussianSequenceEvent(seq), GaussianEvent(1.5))
    )
    mu = math.sqrt(20 / 9 + math.fsum((seq * seq).tolist()) + 1 / 1.5**2)
    exact = float(epsilon_mp(mu, 1e-6))
    report = account(event, delta=1e-6, methods=["gdp", "pld", "rdp"])
    assert report.mu == pytest.approx(mu, rel=1e-13)
    assert exact <= report.bounds["gdp"].value <= exact * (1 + 1e-9)
    assert exact - PLD_BELOW <= report.bounds["pld"].value <= exact + 3 * _interval(event)
    assert report.bounds["rdp"].value > exact


def test_pld_stays_conservative_beyond_exp_range():
    # For ε ≳ 745 dp-accounting's get_epsilon_for_delta loses accuracy (e^{-ε} underflows) and
    # overshoots by ~1 (measured +0.95 at μ = 50); it must stay on the safe side.
    mu = 50.0
    exact = float(epsilon_mp(mu, 1e-6))
    p = epsilon_under("pld", GaussianEvent.from_mu(mu), 1e-6)
    assert exact <= p <= exact + 2.0


# ---------------------------------------------------------------------------------------
# pure ε: basic ≥ advanced ≥ PLD


def test_laplace_composition_order_and_anchor_values():
    report = account(LaplaceEvent.from_epsilon(0.1).repeat(100), delta=1e-5)
    b, a, p, r = (report.bounds[m].value for m in ("basic", "advanced", "pld", "rdp"))
    assert b == pytest.approx(10.0, rel=1e-12)
    assert a == pytest.approx(5.850, abs=5e-4)  # Dwork–Rothblum–Vadhan
    assert p == pytest.approx(4.220, abs=1e-3)  # Laplace-specific PLD
    assert r == pytest.approx(4.533, abs=1e-3)  # Laplace RDP (dp-accounting grid: 4.5327)
    assert b >= a >= p
    assert report.best.method == "pld"
    assert report.best.value == p


@pytest.mark.slow
def test_laplace_small_epsilon_many_steps():
    report = account(LaplaceEvent.from_epsilon(0.01).repeat(10**4), delta=1e-5)
    b, a, p, r = (report.bounds[m].value for m in ("basic", "advanced", "pld", "rdp"))
    assert b == pytest.approx(100.0, rel=1e-12)
    assert a == pytest.approx(5.804, abs=1e-3)
    # dp-accounting's own PLDAccountant gives 4.36799 (PRV: 4.373 ± 0.01); ours composes in long
    # double and is taken at δ − η, η = 2.5e-11 the FFT rounding bound of 10^4 self-compositions
    assert p == pytest.approx(4.368, abs=1e-3)
    assert r == pytest.approx(4.719, abs=1e-3)
    assert b >= a >= r >= p


def test_advanced_never_exceeds_basic_and_best_takes_the_minimum():
    # ε₀ = 1, k = 10: the DRV formula gives 32.36 > basic 10; advanced reports basic's 10
    from dpaudit.accounting import advanced
    from dpaudit.accounting.composition import normal_form

    event = LaplaceEvent.from_epsilon(1.0).repeat(10)
    report = account(event, delta=1e-5)
    assert advanced._drv_epsilon(normal_form(event)[0], 1e-5) == pytest.approx(32.36, abs=0.01)
    assert report.bounds["advanced"].value == report.bounds["basic"].value == pytest.approx(10.0)
    assert report.best.value <= report.bounds["basic"].value
    assert report.best.method in {"pld", "rdp"}
    assert report.bounds["pld"].value == pytest.approx(9.990, abs=1e-3)


@settings(max_examples=25, deadline=None)
@given(sigma=st.floats(0.05, 50.0), k=st.integers(1, 400), eps0=st.floats(0.01, 2.0), j=st.integers(0, 20),
       log_delta=st.floats(-14.0, -2.0))
def test_advanced_skips_its_search_only_where_basic_wins_bit_for_bit(sigma, k, eps0, j, log_delta):
    # the search is skipped where the DRV bound with every δ at the whole remaining δ already
    # exceeds basic's: the answer must be exactly min(searched DRV, basic)
    from dpaudit.accounting import advanced, basic

    parts = [GaussianEvent(sigma=sigma).repeat(k)]
    if j:
        parts.append(LaplaceEvent.from_epsilon(eps0).repeat(j))
    comp = normal_form(ComposedEvent(tuple(parts)))[0]
    delta = 10.0**log_delta
    searched = advanced._drv_epsilon(comp, delta)
    assert advanced.epsilon(comp, delta) == min(searched, basic.epsilon(comp, delta))
    _, _, _, rep, mult = advanced._parts(comp)
    norm_f, lin_f = advanced._parts(comp)[:2]
    floor = advanced._drv_floor(rep, mult, norm_f, lin_f, math.log(delta))
    assert floor <= searched * (1 + 1e-10)


def test_one_gaussian_mechanism_needs_no_advanced_search():
    # the run of Thompson sampling's default: five report-noisy-max rounds, where the DRV term
    # ε(e^ε − 1) dominates; basic wins and the 33 + 5·17-point search is not run
    from unittest import mock

    from dpaudit.accounting import advanced

    event = GaussianEvent(sigma=1.118).repeat(5)
    with mock.patch.object(advanced, "_search", side_effect=AssertionError("searched")):
        assert advanced.epsilon(normal_form(event)[0], 1e-6) == epsilon_under("basic", event, 1e-6)


# ---------------------------------------------------------------------------------------
# not applicable


def test_approx_dp_events_rdp_and_gdp_not_applicable():
    event = ComposedEvent((ApproxDpEvent(0.5, 1e-7).repeat(4), LaplaceEvent.from_epsilon(0.2)))
    report = account(event, delta=1e-5)
    for m in ("rdp", "gdp"):
        b = report.bounds[m]
        assert not b.applicable and b.value is None
        assert "delta > 0" in b.reason
    assert report.mu is None
    d = report.to_dict()
    assert d["bounds"]["rdp"] is None and d["bounds"]["gdp"] is None
    assert set(d["reasons"]) == {"rdp", "gdp"}
    # best is still a valid bound from a method that applies
    assert report.best.applicable and report.best.method in {"basic", "advanced", "pld"}
    assert report.bounds["basic"].value == pytest.approx(2.2)
    # the exact composition is at least the single Laplace step (a lower bound) ...
    assert report.best.value >= 0.2
    # ... and at most basic composition
    assert report.best.value <= report.bounds["basic"].value
    # the delta budget is charged: basic needs delta ≥ 4e-7
    with pytest.raises(Exception, match="delta"):
        epsilon_under("basic", event, 1e-7)


def test_approx_dp_in_one_parallel_branch_blocks_rdp_for_the_whole_event():
    event = ParallelEvent((GaussianEvent(sigma=2.0), ApproxDpEvent(1.0, 1e-8)))
    report = account(event, delta=1e-6)
    assert not report.bounds["rdp"].applicable
    assert not report.bounds["gdp"].applicable
    assert report.best.applicable
    # worst branch ≥ the Gaussian branch alone
    assert report.best.value >= float(epsilon_mp(0.5, 1e-6)) - 1e-12


# ---------------------------------------------------------------------------------------
# extremes


@pytest.mark.slow
def test_million_heterogeneous_gaussians_correct():
    # timing lives in benchmarks/bench_accounting.py (no timed unit tests)
    rng = np.random.default_rng(0)
    mus = rng.uniform(0.02, 0.04, 10**6)
    event = GaussianSequenceEvent(mus)
    mu = math.sqrt(math.fsum((mus * mus).tolist()))
    report = account(event, delta=1e-6, methods=["gdp", "rdp"])
    assert report.num_releases == 10**6
    assert report.mu == pytest.approx(mu, rel=1e-13)
    exact = float(epsilon_mp(mu, 1e-6))
    g = report.bounds["gdp"].value
    assert exact <= g <= exact * (1 + 1e-9)
    # RDP of a Gaussian sequence is the RDP of one Gaussian with the total μ
    r = report.bounds["rdp"].value
    assert r == pytest.approx(epsilon_under("rdp", GaussianEvent.from_mu(mu), 1e-6), rel=1e-9)
    assert g < r < 1.1 * g


@pytest.mark.parametrize(("mu", "delta"), [(1000.0, 1e-300), (1000.0, 1e-6), (1e-3, 1e-300), (30.0, 1e-300)])
def test_extreme_mu_and_delta_finite_and_correct(mu, delta):
    report = account(GaussianEvent.from_mu(mu), delta=delta, methods=["gdp", "rdp"])
    g, r = report.bounds["gdp"].value, report.bounds["rdp"].value
    exact = float(epsilon_mp(mu, delta))
    assert math.isfinite(g) and math.isfinite(r)
    assert exact <= g <= exact * (1 + 1e-9) + 1e-12
    assert r >= g


def test_extreme_delta_at_large_epsilon_is_positive_for_gaussian():
    # No Gaussian mechanism is (ε, 0)-DP: a certified δ of exactly 0 would be wrong, even
    # when the true δ (here e^{-5000}) is below the smallest double.
    event = GaussianEvent.from_mu(0.01)
    for m in ("basic", "rdp", "gdp", "pld"):
        assert delta_under(m, event, 1.0) > 0.0, m
    assert gdp_epsilon(0.01, 1e-300) < 1.0


def test_large_parallel_compositions_answer_or_say_why():
    """Issue 23: two ParallelEvents of 70 branches each (4900 > 4096 alternatives) raised ValueError.
    Gaussian-only branches merge into the worst Gaussian (exact for gdp), single-family Laplace
    branches into the largest ε repeated the most; anything else is "not applicable: why"."""
    from dpaudit.accounting import NotApplicable
    from dpaudit.events import ParallelEvent

    gauss = ParallelEvent(tuple(GaussianEvent(sigma=1 + i / 10).repeat(3) for i in range(70)))
    other = ParallelEvent(tuple(GaussianEvent(sigma=2 + i / 10) for i in range(70)))
    report = account(ComposedEvent((gauss, other)), delta=1e-6)
    exact = account(GaussianEvent.from_mu(math.sqrt(3 + 0.25)), delta=1e-6)
    assert report.bounds["gdp"].value == pytest.approx(exact.bounds["gdp"].value, rel=1e-12)
    lap = ParallelEvent(tuple(LaplaceEvent(scale=1 + i / 10).repeat(1 + i % 3) for i in range(70)))
    assert account(ComposedEvent((lap, lap)), delta=1e-6).bounds["basic"].value == pytest.approx(6.0)
    mixed = ParallelEvent(tuple(ComposedEvent((LaplaceEvent(1 + i), GaussianEvent(1 + i)))
                                for i in range(70)))
    report = account(ComposedEvent((mixed, mixed)), epsilon=1.0)
    assert not report.best.applicable
    assert all("4900 > 4096 parallel alternatives" in b.reason for b in report.bounds.values())
    with pytest.raises(NotApplicable, match="parallel alternatives"):
        epsilon_under("rdp", ComposedEvent((mixed, mixed)), 1e-6)
    with pytest.raises(NotApplicable, match="parallel alternatives"):
        delta_under("gdp", ComposedEvent((mixed, mixed)), 1.0)


@pytest.mark.parametrize(("nm", "q"), [(1.0, 0.01), (0.8, 0.1), (8.0, 0.3), (2.0, 1e-3), (0.5, 0.9)])
def test_sampled_gaussian_pmfs_are_dp_accountings(nm, q):
    """The connect-the-dots PMFs of a Poisson-subsampled Gaussian step are dp-accounting's
    (``from_gaussian_mechanism(σ, sampling_prob=q)``) to the rounding of its second differences of
    δ (≈ 1e-11), in both directions, on the same grid; the mass at infinity is the whole truncated
    tail (at most e^-50), dp-accounting's a part of it."""
    from dp_accounting.pld import privacy_loss_distribution as dp_pld

    from dpaudit.accounting.pld_pmf import from_dp
    from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs

    theirs = dp_pld.from_gaussian_mechanism(nm, sampling_prob=q, pessimistic_estimate=True,
                                            value_discretization_interval=1e-4)
    for ours, attr in zip(sampled_gaussian_pmfs(nm, q, 1e-4), ("_pmf_remove", "_pmf_add")):
        ref = from_dp(getattr(theirs, attr))
        assert (ours.lower, ours.probs.size) == (ref.lower, ref.probs.size)
        np.testing.assert_allclose(ours.probs, ref.probs, rtol=0, atol=2e-11)
        assert ref.inf_mass <= ours.inf_mass <= math.exp(-50)


def test_pld_answers_laplace_compositions_of_1e7_and_1e9_steps():
    """Issue 23: k Laplace steps of scale sqrt(k), δ = 1e-6. PLD declined from 10^7 steps (its grid
    was sized by the support 2kε) and best fell back to RDP (5.2212; dp-accounting's PLD 4.9240).
    Now the grid is sized by a concentration bound and small steps are discretised finer, then
    coarsened: PLD answers below RDP and dp-accounting, above the GDP limit 4.8866 (μ = 1)."""
    for k, rdp_value in ((10**7, 5.2212), (10**9, 5.2215)):
        report = account(LaplaceEvent(scale=math.sqrt(k)).repeat(k), delta=1e-6, methods=["pld", "rdp"])
        pld, rdp = report.bounds["pld"], report.bounds["rdp"]
        assert pld.applicable and rdp.value == pytest.approx(rdp_value, abs=1e-4)
        assert 4.8866 < pld.value < (4.9240 if k == 10**7 else 5.0) < rdp.value
        assert "discretised" in pld.note and report.best.method == "pld"


def test_pld_accuracy_and_widened_grid_are_reported():
    from dpaudit.accounting.pld import accuracy_of

    event = LaplaceEvent.from_epsilon(0.1).repeat(100)
    fine = account(event, delta=1e-5, methods=["pld"]).bounds["pld"].value
    with accuracy_of(1e-3):
        coarse = account(event, delta=1e-5, methods=["pld"]).bounds["pld"].value
    assert fine <= coarse < fine + 0.05
    with pytest.raises(ValueError, match="pld accuracy must be in"):
        with accuracy_of(2.0):
            pass
    from dpaudit.events import PoissonSampledEvent

    wide = account(PoissonSampledEvent(0.1, GaussianEvent(sigma=0.8)).repeat(10**6), delta=1e-5,
                   methods=["pld"])
    assert "widened from 0.0001" in wide.bounds["pld"].note and "widened" in wide.to_dict()["notes"]["pld"]
    assert "widened from 0.0001" in str(wide)
