"""The SciPy-free normal tails behind the GDP conversions (:mod:`dpaudit.normal_tails`), against
50-digit mpmath over the whole range the conversions reach, and their two evaluation paths."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit import normal_tails as nt

MP_DIGITS = 50  # mpmath's working digits in this module's tests (tests/conftest.py)


def _erfcx_ref(x: float) -> float:
    v = mp.mpf(x)
    if v > 1e6:  # erfcx(x) = (1/(x√π))(1 − 1/(2x²) + 3/(4x⁴) − …): exact to a double there
        return float(1 / (v * mp.sqrt(mp.pi)) * (1 - 1 / (2 * v * v) + 3 / (4 * v**4)))
    return float(mp.erfc(v) * mp.exp(v * v))


def _log_ndtr_ref(x: float) -> float:
    v = mp.mpf(x)
    if v < -1e6:
        return float(-v * v / 2 - mp.log(-v) - mp.log(mp.sqrt(2 * mp.pi)) + mp.log(1 - 1 / (v * v)))
    if v > 0:
        return float(mp.log1p(-mp.ncdf(-v)))
    return float(mp.log(mp.ncdf(v)))


def _ndtri_exp_ref(y: float) -> float:
    """Newton's method at 80 digits from SciPy's double (an independent implementation)."""
    from scipy.special import ndtri_exp

    with mp.workdps(80):
        t, x = mp.mpf(y), mp.mpf(float(ndtri_exp(y)))
        for _ in range(200):
            lp = mp.log1p(-mp.ncdf(-x)) if x > 0 else mp.log(mp.ncdf(x))
            step = (lp - t) / (mp.npdf(x) / mp.exp(lp))
            x -= step
            if abs(step) < mp.mpf(10) ** -60 * (1 + abs(x)):
                break
        return float(x)


_ERFCX_X = st.one_of(st.floats(-26.5, 40.0), st.floats(1e-300, 1e300))


@settings(max_examples=300, deadline=None)
@given(_ERFCX_X)
def test_erfcx_is_accurate_to_a_few_ulps(x: float) -> None:
    ref = _erfcx_ref(x)
    assert abs(float(nt.erfcx(x)) - ref) <= 2e-15 * ref


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(-300.0, 38.0), st.floats(-1e150, -1.0)))
def test_log_ndtr_is_accurate(x: float) -> None:
    ref = _log_ndtr_ref(x)
    if ref < -1e-300:  # above, log Φ(x) itself underflows to a subnormal or zero
        assert abs(float(nt.log_ndtr(x)) - ref) <= 2e-15 * abs(ref)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.floats(-1e4, -1e-300), st.floats(-1.0, -1e-12)))
def test_ndtri_exp_inverts_log_ndtr(y: float) -> None:
    ref = _ndtri_exp_ref(y)
    assert abs(float(nt.ndtri_exp(y)) - ref) <= 1e-14 * abs(ref) + 1e-15  # absolute near the median


_ERFINV_X = st.one_of(st.floats(-0.999999, 0.999999), st.floats(2.3e-308, 1e-3), st.floats(0.5, 1.0 - 1e-16))


@settings(max_examples=300, deadline=None)
@given(_ERFINV_X)
def test_erfinv_is_accurate(x: float) -> None:
    if abs(x) >= 1.0 or (x != 0 and abs(x) < 2.3e-308):
        return
    ref = float(mp.erfinv(mp.mpf(x)))
    assert abs(float(nt.erfinv(x)) - ref) <= 1e-14 * abs(ref)


def test_erfinv_refuses_what_has_no_inverse() -> None:
    assert float(nt.erfinv(0.0)) == 0.0 and float(nt.erfinv(-0.25)) == -float(nt.erfinv(0.25))
    for bad in (1.0, -1.0, math.nan, 2.0):
        with pytest.raises(ValueError, match="x must be in"):
            nt.erfinv(bad)


def test_the_extremes() -> None:
    assert float(nt.erfcx(-27.5)) == math.inf and float(nt.erfcx(-26.6)) > 1e307
    assert float(nt.erfcx(1e308)) > 0 and float(nt.erfcx(0.0)) == 1.0
    # below log δ = −1e30 the quantile is −√(−2y) to the last bit; no overflow at −1.7e308
    assert float(nt.ndtri_exp(-1.7e308)) == pytest.approx(-math.sqrt(2.0) * math.sqrt(1.7e308), rel=1e-15)
    assert float(nt.ndtri_exp(-5e-324)) == pytest.approx(38.467405617144344, rel=1e-14)
    assert float(nt.ndtri_exp(-math.inf)) == -math.inf
    for bad in (0.0, 1.0, math.nan):
        with pytest.raises(ValueError, match="y must be"):
            nt.ndtri_exp(bad)


def test_small_and_large_arrays_give_the_same_bits() -> None:
    """Up to 32 elements erfcx runs one float at a time in plain Python, above with NumPy: the
    same operations, so a value never depends on the size of the array it came in."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-27.5, 30.0, 4000), np.exp(rng.uniform(-700, 700, 2000)),
                        -np.exp(rng.uniform(-700, 3.3, 1000)), [0.0, -0.0, 8.0, -8.0, 1e308, -1e308, -27.0]])
    whole = nt.erfcx(x)
    one_by_one = np.array([nt.erfcx(x[i : i + 1])[0] for i in range(x.size)])
    assert np.array_equal(whole, one_by_one)
    assert not np.isnan(whole).any()


def test_the_written_out_gauss_legendre_rule_is_numpys() -> None:
    from dpaudit.conversions import _GL_W, _GL_X

    x, w = np.polynomial.legendre.leggauss(12)
    assert np.array_equal(_GL_X, (x + 1.0) / 2.0) and np.array_equal(_GL_W, w / 2.0)
