"""The exact rank of a set of linear-matroid vectors against rational Gaussian elimination.

:func:`bandits.structures.linear_matroid._exact_rank` eliminates on integers (each row scaled by a
power of two, rows reduced by their gcd); the reference here is the textbook elimination over
``fractions.Fraction``, on integer rows, on doubles of every exponent and on dependent rows.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bandits.structures.linear_matroid import LinearMatroid, _exact_rank


def _rational_rank(rows: list[list[float]]) -> int:
    m = [[Fraction(x) for x in r] for r in rows]
    rank = 0
    for col in range(len(m[0]) if m else 0):
        piv = next((i for i in range(rank, len(m)) if m[i][col] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        for i in range(rank + 1, len(m)):
            f = m[i][col] / m[rank][col]
            m[i] = [a - f * b for a, b in zip(m[i], m[rank])]
        rank += 1
    return rank


ENTRIES = st.one_of(
    st.integers(-3, 3).map(float),
    st.integers(-(2**31) + 1, 2**31 - 1).map(float),
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False),
)


@st.composite
def matrices(draw: st.DrawFn) -> list[list[float]]:
    d = draw(st.integers(1, 5))
    rows = draw(st.lists(st.lists(ENTRIES, min_size=d, max_size=d), min_size=1, max_size=7))
    if draw(st.booleans()) and len(rows) >= 2:  # a dependent row: an exact multiple or a sum
        a, b = rows[0], rows[1]
        rows.append([2.0 * x for x in a] if draw(st.booleans()) else [x + y for x, y in zip(a, b)])
    return rows


@settings(max_examples=300, deadline=None)
@given(matrices())
def test_exact_rank_is_the_rational_rank(rows: list[list[float]]) -> None:
    assume(all(abs(x) < float("inf") for r in rows for x in r))  # a dependent sum may overflow
    assert _exact_rank(rows) == _rational_rank(rows)


def test_the_rank_table_of_a_small_matroid() -> None:
    rows = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0.5, 0.5, 0], [0, 0, 0]]
    m = LinearMatroid.from_rows(rows)
    table = m.rank_table()
    for mask in range(1 << len(rows)):
        subset = [rows[e] for e in range(len(rows)) if (mask >> e) & 1]
        assert table[mask] == (_rational_rank(subset) if subset else 0)
