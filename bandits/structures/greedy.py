"""The greedy maximum-weight basis of a matroid for R score orders at once.

Scan the elements by decreasing score and keep each one that preserves independence (the greedy
algorithm of matroid bandits; Kveton et al. 2014). Ties in the score are broken by the ``order``
the caller passes (see :func:`bandits.structures.combinatorial.ranking`: lowest index first, or a
data-independent random key). Loops (zero vectors, self-loop edges, blocks of capacity 0) are never
kept. The result is returned in greedy order ``a_1, …, a_K``. Vectorised engines give identical
results (tested):

* ground sets of at most :data:`bandits.structures.matroids.TABLE_MAX` elements: element ``e_p``
  of the order is kept iff ``rank(prefix_p) > rank(prefix_{p−1})`` (the greedy set spans every
  prefix), read off a precomputed table of ranks of all 2ⁿ subsets — no loop over positions;
* integer linear matroids with numba: the compiled exact elimination
  (:func:`bandits.engine.compiled.greedy_linear_exact`);
* otherwise: one pass over positions, each testing R sets at once with the matroid's state.

>>> import numpy as np
>>> from bandits.structures.linear_matroid import LinearMatroid
>>> m = LinearMatroid.from_rows([[1, 0], [2, 0], [0, 1], [0, 0]])
>>> greedy(m, np.array([[1, 0, 2, 3], [0, 1, 2, 3]])).tolist()   # orders (best first)
[[1, 2], [0, 2]]
"""

from __future__ import annotations

import numpy as np

from bandits.engine import compiled
from bandits.structures.linear_matroid import LinearMatroid
from bandits.structures.matroids import TABLE_MAX, Matroid, UniformMatroid

__all__ = [
    "greedy",
    "cover_with_bases",
]


def greedy(matroid: Matroid, order: np.ndarray, *, engine: str = "auto") -> np.ndarray:
    """The greedy basis for each row of ``order`` (R, n) — a permutation of the ground set,
    best element first — in greedy order, shape (R, K) with K = ``matroid.rank``.

    ``engine``: ``"auto"`` (the rank table when n ≤ :data:`TABLE_MAX`; else, for an exact
    linear matroid, the compiled kernel of :mod:`bandits.engine.compiled` when numba is available; else
    the incremental state), ``"table"``, ``"state"`` or ``"numba"``. Every engine is exact and
    they give identical results (tested); the choice only changes speed.
    """
    if not isinstance(matroid, Matroid):
        raise ValueError(f"matroid must be a Matroid, got {type(matroid).__name__}")
    o = np.asarray(order, dtype=np.int64)
    if o.ndim == 1:
        o = o[None, :]
    n, K = matroid.n_elements, matroid.rank
    if o.ndim != 2 or o.shape[1] != n:
        raise ValueError(f"order must have shape (R, {n}), got {np.shape(order)}")
    if engine not in ("auto", "table", "state", "numba"):
        raise ValueError(f"engine must be 'auto', 'table', 'state' or 'numba', got {engine!r}")
    R = o.shape[0]
    if isinstance(matroid, UniformMatroid):
        return o[:, :K].copy()
    if engine == "table" or (engine == "auto" and n <= TABLE_MAX):
        table = matroid.rank_table()
        prefix = np.cumsum(np.left_shift(1, o), axis=1)
        ranks = table[prefix]  # non-decreasing along each row
        keep = np.empty(o.shape, dtype=bool)
        np.greater(ranks[:, 1:], ranks[:, :-1], out=keep[:, 1:])  # np.diff's result > 0, without its overhead
        keep[:, 0] = ranks[:, 0] > 0
        return o[keep].reshape(R, K)
    linear = isinstance(matroid, LinearMatroid) and matroid.exact
    if engine == "numba" and not linear:
        raise ValueError("engine='numba' applies to exact (integer) linear matroids")
    if isinstance(matroid, LinearMatroid) and linear and (
        engine == "numba" or (engine == "auto" and compiled.available())
    ):
        residues, primes = matroid._kernel_args()
        return compiled.greedy_linear_exact(o, residues, primes, K)
    state = matroid.new_state(R)
    chosen = np.empty((R, K), dtype=np.int64)
    size = np.zeros(R, dtype=np.int64)
    rows_all = np.arange(R)
    for p in range(n):
        active = rows_all[size < K]
        if active.size == 0:
            break
        e = o[active, p]
        ok = state.try_add(active, e)
        if not ok.any():
            continue
        r, e = active[ok], e[ok]
        chosen[r, size[r]] = e
        size[r] += 1
    return chosen


def cover_with_bases(matroid: Matroid) -> tuple[tuple[int, ...], ...]:
    """Bases that together contain every element that is not a loop (data-independent):
    repeatedly the greedy basis that prefers uncovered elements (ties by index).

    >>> from bandits.structures.matroids import UniformMatroid
    >>> cover_with_bases(UniformMatroid(5, 2))
    ((0, 1), (2, 3), (4, 0))
    """
    n = matroid.n_elements
    need = set(range(n)) - set(matroid.loops)
    out: list[tuple[int, ...]] = []
    while need:
        order = np.array([sorted(range(n), key=lambda e: (e not in need, e))])
        basis = tuple(int(e) for e in greedy(matroid, order)[0])
        out.append(basis)
        need -= set(basis)
    return tuple(out)
