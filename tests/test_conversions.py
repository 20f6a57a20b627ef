"""GDP ↔ (ε, δ) conversions against 60-digit mpmath, over the whole advertised range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from dpaudit.conversions import (
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
    gdp_mu,
    gdp_tradeoff,
    pure_dp_to_gdp,
)
from tests.mp_reference import epsilon_mp, log_delta_mp, mu_mp

mus = st.floats(min_value=1e-3, max_value=1e3)
log10_deltas = st.floats(min_value=-300, max_value=math.log10(0.5))
epsilons = st.floats(min_value=0.0, max_value=1e5)


@pytest.mark.parametrize(("mu", "expected"), [(1, 4.886554117), (5, 35.566343714), (10, 96.717271964)])
def test_appendix_d_values(mu, expected):
    # Ou, Avella Medina & Cummings (2024), Appendix D: ε = 4.88, 35.57, 96.71 at δ = 1e-6 for 1-, 5-, 10-GDP
    eps = gdp_epsilon(mu, 1e-6)
    assert eps == pytest.approx(expected, rel=1e-9)
    assert eps >= float(epsilon_mp(mu, 1e-6))
    assert f"{eps:.2f}" in {"4.89", "35.57", "96.72"}


@pytest.mark.parametrize(
    ("mu", "delta", "expected"),
    [(math.sqrt(50), 1e-5, 54.37664), (math.sqrt(500), 1e-5, 344.45102), (math.sqrt(5e4), 1e-5, 25952.668)],
)
def test_reference_values_outside_paper(mu, delta, expected):
    assert gdp_epsilon(mu, delta) == pytest.approx(expected, rel=1e-7)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(mu=mus, lg=log10_deltas)
def test_epsilon_matches_mpmath_and_is_conservative(mu, lg):
    delta = 10.0**lg
    exact = epsilon_mp(mu, delta)
    eps = gdp_epsilon(mu, delta)
    assert math.isfinite(eps)
    assert eps >= float(exact)  # certified: never below the exact value
    if exact > 0:
        assert abs(eps - float(exact)) <= 1e-9 * float(exact)
    else:
        assert eps == 0.0
    # and the certified ε really gives δ ≤ target under the exact profile
    assert log_delta_mp(mu, eps) <= math.log(delta)


@settings(max_examples=150, deadline=None)
@given(mu=mus, eps=epsilons)
def test_delta_matches_mpmath(mu, eps):
    exact = log_delta_mp(mu, eps)
    ld = gdp_log_delta(mu, eps)
    assert math.isfinite(ld)
    assert abs(ld - float(exact)) <= 1e-9 * max(1.0, abs(float(exact)))
    if exact > math.log(1e-300):
        d = gdp_delta(mu, eps)
        assert d >= float(math.exp(exact)) and d > 0
        assert d <= float(math.exp(exact)) * (1 + 1e-9)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(eps=st.floats(min_value=0.0, max_value=1e3), lg=st.floats(min_value=-300, max_value=-1))
def test_mu_matches_mpmath_and_is_conservative(eps, lg):
    delta = 10.0**lg
    exact = mu_mp(eps, delta)
    assume(1e-3 <= exact <= 1e3)  # the advertised range of μ
    m = gdp_mu(eps, delta)
    assert m <= float(exact)
    assert abs(m - float(exact)) <= 1e-9 * float(exact)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(mu=mus, lg=log10_deltas)
def test_round_trip(mu, lg):
    # ε(δ(ε)) = ε and δ(ε(δ)) = δ up to the conservative rounding
    delta = 10.0**lg
    eps = gdp_epsilon(mu, delta)
    if eps > 0:
        assert gdp_log_delta(mu, eps) <= math.log(delta)
        assert gdp_log_delta(mu, eps) == pytest.approx(math.log(delta), rel=1e-9, abs=1e-9)
        eps2 = gdp_epsilon(mu, math.exp(gdp_log_delta(mu, eps))) if gdp_log_delta(mu, eps) > -700 else eps
        assert eps2 == pytest.approx(eps, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(mu1=mus, mu2=mus, lg=log10_deltas)
def test_monotone_in_mu(mu1, mu2, lg):
    lo, hi = sorted((mu1, mu2))
    assert gdp_epsilon(lo, 10.0**lg) <= gdp_epsilon(hi, 10.0**lg)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(mu=mus, lg1=log10_deltas, lg2=log10_deltas, e1=epsilons, e2=epsilons)
def test_monotone_in_delta_and_epsilon(mu, lg1, lg2, e1, e2):
    d_lo, d_hi = sorted((10.0**lg1, 10.0**lg2))
    assert gdp_epsilon(mu, d_lo) >= gdp_epsilon(mu, d_hi)
    lo, hi = sorted((e1, e2))
    assert gdp_log_delta(mu, lo) >= gdp_log_delta(mu, hi)


def test_extremes_are_finite_and_correct():
    eps = gdp_epsilon(1000.0, 1e-300)
    assert math.isfinite(eps)
    assert eps == pytest.approx(float(epsilon_mp(1000.0, 1e-300)), rel=1e-12)
    assert gdp_delta(1000.0, 1e5) == pytest.approx(1.0, abs=1e-12)
    # (40, 1): δ = 3.9e-343 is below the smallest double: log δ is exact, δ is a tiny positive
    assert gdp_log_delta(1.0, 40.0) == pytest.approx(-788.42341, abs=1e-5)
    assert gdp_delta(1.0, 40.0) > 0
    # (800, 30) and (26000, 223.6) give NaN with the naive formula
    assert gdp_log_delta(30.0, 800.0) == pytest.approx(-71.76955, abs=1e-5)
    assert gdp_log_delta(math.sqrt(5e4), 26000.0) == pytest.approx(-12.48243, abs=1e-5)


def test_vectorised_epsilon_equals_scalar():
    mus_arr = np.array([0.01, 0.5, 3.0, 100.0])
    vec = gdp_epsilon(mus_arr, 1e-7)
    assert vec.shape == (4,)
    for m, v in zip(mus_arr, vec):
        assert v == gdp_epsilon(float(m), 1e-7)


def test_pure_dp_to_gdp_is_tight_for_randomized_response():
    # RR_ε's trade-off kink at α* = 1/(1+e^ε) lies exactly on G_μ for μ = pure_dp_to_gdp(ε)
    for eps in [0.01, 0.5, 1.0, 5.0, 30.0]:
        mu = pure_dp_to_gdp(eps)
        a_star = 1.0 / (1.0 + math.exp(eps))
        assert gdp_tradeoff(mu, a_star) == pytest.approx(a_star, rel=1e-9)
        assert gdp_tradeoff(mu * 0.99, a_star) > a_star


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: gdp_epsilon(-1.0, 1e-5), "mu"),
        (lambda: gdp_epsilon(1.0, 0.0), "delta"),
        (lambda: gdp_epsilon(1.0, 1.0), "delta"),
        (lambda: gdp_delta(1.0, -1.0), "epsilon"),
        (lambda: gdp_mu(1.0, float("nan")), "delta"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _newton_every_element_every_step(m, tt, top, steps=8):
    """Newton's iteration as first written: every element for all ``steps`` steps."""
    from dpaudit.conversions import _log_delta, _upper
    from dpaudit.normal_tails import ndtri_exp

    with np.errstate(over="ignore", invalid="ignore"):
        e = np.fmin(top, 0.5 * m * m + m * np.maximum(-ndtri_exp(tt), 0.0))
    for _ in range(steps):
        ld, d = _log_delta(m, e, slope=True)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nxt = e - (_upper(ld) - tt) / d
        e = np.where(np.isfinite(nxt) & (nxt > 0) & (nxt < top), nxt, e)
    return e


@settings(max_examples=40, deadline=None)
@given(lmu=st.lists(st.floats(min_value=-4, max_value=4), min_size=1, max_size=80),
       lg=st.floats(min_value=-700, max_value=-0.01))
@example(lmu=[0.0, 0.0, 0.0, -3.1617533997949607, 0.0, 0.0], lg=-246.21356447014006)  # per-element stops
def test_newton_stops_at_its_fixed_point_with_the_same_bits(lmu, lg):
    """The iteration stops once a step moves no element: the estimates (and so the searches built
    on them) keep every bit of the full iteration. (Stopping element by element would not: the
    quadrature's matrix product rounds differently on batches of other sizes.)"""
    from dpaudit.conversions import _newton

    m = 10.0 ** np.array(lmu)
    tt = np.full(m.size, lg) - np.arange(m.size) % 7
    top = np.minimum(0.5 * m * m + m * np.sqrt(2.0 * -tt + 2.0), 1.7976931348623157e308)
    fast, full = _newton(m, tt, top), _newton_every_element_every_step(m, tt, top)
    assert fast.view(np.int64).tolist() == full.view(np.int64).tolist()


def test_scalar_gdp_epsilon_log_is_the_array_path_kept() -> None:
    """Scalars are answered once and kept (a report asks for the same (μ, δ) several times): the
    same float, bit for bit, as the broadcasting path, and bad input still raises."""
    from dpaudit.conversions import _epsilon_log, gdp_epsilon_log

    for mu, t in [(1.0, -13.8), (np.float64(0.4472136), -15.42), (3, -700.0), (1e-12, -1.0)]:
        first, again = gdp_epsilon_log(mu, t), gdp_epsilon_log(mu, t)
        assert type(first) is float and first == again == float(_epsilon_log(np.array([mu]), t)[0])
    with pytest.raises(ValueError, match="log_delta"):
        gdp_epsilon_log(1.0, 0.5)
