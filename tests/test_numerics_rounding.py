"""The directed divisions of :mod:`dpaudit.numerics` against exact rationals.

``div_up`` and ``div_down`` decide the rounding direction in double arithmetic (an exact
two-product) inside [1e-290, 1e290] and with rationals outside it; here every case is checked
against ``fractions.Fraction`` computed independently, over the whole positive float range,
near the switch-over bounds, on exact quotients and on NumPy scalars.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.numerics import div_down, div_up

POSITIVE = st.floats(min_value=5e-324, max_value=1.7e308, allow_nan=False, allow_infinity=False)
NEAR_BOUNDS = st.sampled_from([1e-290, 1e290]).flatmap(
    lambda b: st.floats(min_value=b / 4, max_value=b * 4, allow_nan=False, allow_infinity=False))


def _reference_up(num: float, den: float) -> float:
    exact = Fraction(num) / Fraction(den)
    q = num / den
    if math.isinf(q):
        return q
    while Fraction(q) < exact:
        q = math.nextafter(q, math.inf)
    while q > 0 and Fraction(math.nextafter(q, 0.0)) >= exact:
        q = math.nextafter(q, 0.0)
    return q


def _reference_down(num: float, den: float) -> float:
    exact = Fraction(num) / Fraction(den)
    q = num / den
    if math.isinf(q):
        return math.nextafter(q, 0.0)
    while Fraction(q) > exact:
        q = math.nextafter(q, 0.0)
    while not math.isinf(up := math.nextafter(q, math.inf)) and Fraction(up) <= exact:
        q = up
    return q


@settings(max_examples=400, deadline=None)
@given(st.one_of(POSITIVE, NEAR_BOUNDS), st.one_of(POSITIVE, NEAR_BOUNDS))
def test_directed_divisions_are_the_nearest_doubles_on_their_side(num: float, den: float) -> None:
    up, down = div_up(num, den), div_down(num, den)
    assert up == _reference_up(num, den)
    assert down == _reference_down(num, den)
    assert down <= up


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 2**26), st.integers(1, 2**26))
def test_exact_quotients_are_not_moved(a: int, b: int) -> None:
    num, den = float(a * b), float(b)  # exact doubles (below 2**53), num/den = a exactly
    assert div_up(num, den) == div_down(num, den) == float(a)


def test_numpy_scalars_and_integers_round_the_same_way() -> None:
    for num, den in [(1.0, 3.0), (2.0, 7.0), (1e-300, 3.0), (5.0, 1e295)]:
        assert div_up(np.float64(num), np.float64(den)) == div_up(num, den) == _reference_up(num, den)
        assert div_down(np.float64(num), np.float64(den)) == div_down(num, den) == _reference_down(num, den)
    assert div_up(1, 3) == _reference_up(1.0, 3.0) and div_down(1, 3) == _reference_down(1.0, 3.0)
