"""Multiplicity control for threshold tests: a pre-registered grid (Bonferroni) or a sample split.

Taking the best of many thresholds with a per-threshold confidence is *not* a valid bound (it
breaks the 95 % guarantee). The caller chooses, in the signature of the bounds of
:mod:`dpaudit.audit.lower_bounds`, one of two valid procedures:

* :class:`Bonferroni` — a pre-registered grid of thresholds (order statistics of the null
  sample at log-spaced ranks from both ends, :func:`threshold_grid`, both orientations); each of
  the ``2·tests`` upper bounds uses ``α/(2·tests)``, so all hold simultaneously with probability
  ``≥ confidence`` (Bonferroni's inequality: P(∪ Aᵢ) ≤ Σ P(Aᵢ)) and the best test is a valid
  bound. CP at an order statistic of the null sample is exact for continuous statistics and
  conservative under ties.
* :class:`SampleSplit` — choose the threshold on the first ``fraction`` of both samples and
  certify it with ``α/2`` per rate on the rest (samples must be i.i.d., so the order does not
  matter).

:func:`grid_family` gives the thresholds, orientations and error counts of the grid family.

Example:
    >>> import numpy as np
    >>> t, o, fp, fn = grid_family(np.arange(10.0), np.arange(10.0) + 5, 4)
    >>> t.tolist()   # null order statistics at the ranks of threshold_grid(10, 4), both orientations
    [9.0, 5.0, 4.0, 0.0, 0.0, 4.0, 5.0, 9.0]
    >>> o.tolist(), fp.tolist(), fn.tolist()
    ([1, 1, 1, 1, -1, -1, -1, -1], [0, 4, 5, 9, 0, 4, 5, 9], [5, 1, 0, 0, 10, 10, 10, 6])
    >>> Bonferroni().describe(), SampleSplit(fraction=0.3).describe()
    ('bonferroni(grid_size=300)', 'split(fraction=0.3, grid_size=300)')
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dpaudit.validation import check_integer, check_probability

__all__ = ["threshold_grid", "Bonferroni", "SampleSplit", "Selection", "grid_family"]


def threshold_grid(n: int, size: int) -> np.ndarray:
    """Pre-registered false-positive ranks for a null sample of size ``n``.

    About ``size`` integers in ``[0, n − 1]``, log-spaced from both ends (dense near 0, where
    FPR is small, and near ``n − 1``, where FNR is small). The threshold of rank ``f`` is the
    ``(n − f)``-th smallest null value, so exactly ``f`` null values lie above it (without ties).
    The grid depends only on ``n`` and ``size``, never on the data, so it is computed once per
    (n, size) and returned read-only.

    >>> threshold_grid(10, 6).tolist()
    [0, 1, 4, 5, 8, 9]
    """
    return _threshold_grid(check_integer("n", n), check_integer("size", size))


@functools.lru_cache(maxsize=256)
def _threshold_grid(n: int, size: int) -> np.ndarray:
    half = max(1, -(-int(size) // 2))
    top = (n + 1) / 2.0
    want = min(half, int(np.round(top)))  # ranks 0 .. round(top) - 1 are available
    k = half
    for _ in range(64):  # add points until `want` distinct ranks (duplicates appear near rank 0)
        f = np.unique(np.round(np.geomspace(1.0, top, k)).astype(np.int64) - 1)
        if f.size >= want:
            break
        k += want - f.size
    out = np.unique(np.concatenate([f, n - 1 - f]))
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class Bonferroni:
    """Multiplicity control by a pre-registered threshold grid and a Bonferroni correction.

    ``grid_size`` ranks per orientation (:func:`threshold_grid`), both orientations; with
    ``T`` tests in total every rate bound is at level ``(1 − confidence)/(2T)``.
    """

    grid_size: int = 300

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid_size", check_integer("grid_size", self.grid_size))

    def describe(self) -> str:
        return f"bonferroni(grid_size={self.grid_size})"


@dataclass(frozen=True)
class SampleSplit:
    """Multiplicity control by sample splitting.

    The first ``fraction`` of the null and of the alternative samples choose the best of the
    ``grid_size``-per-orientation candidate thresholds; the remaining samples certify that one
    threshold with level ``(1 − confidence)/2`` per rate. Valid for i.i.d. samples.
    """

    fraction: float = 0.5
    grid_size: int = 300

    def __post_init__(self) -> None:
        object.__setattr__(self, "fraction", check_probability("fraction", self.fraction))
        Bonferroni(self.grid_size)

    def describe(self) -> str:
        return f"split(fraction={self.fraction}, grid_size={self.grid_size})"


Selection = Bonferroni | SampleSplit


def grid_family(
    null_sorted: np.ndarray, alt_sorted: np.ndarray, grid_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds, orientations, FP (rank-based) and FN counts of the grid family.

    Sort once, then one ``searchsorted`` per orientation: O(n log n + T log n).
    """
    n0 = null_sorted.size
    f = threshold_grid(n0, grid_size)
    # orientation +1: say x' when s > t, t = (n0 - f)-th smallest null value
    t_up = null_sorted[n0 - 1 - f]
    fn_up = np.searchsorted(alt_sorted, t_up, side="right")  # alt values <= t
    # orientation -1: say x' when s < t, t = (f + 1)-th smallest null value
    t_dn = null_sorted[f]
    fn_dn = alt_sorted.size - np.searchsorted(alt_sorted, t_dn, side="left")  # alt values >= t
    thresholds = np.concatenate([t_up, t_dn])
    orient = np.concatenate([np.ones(f.size, np.int64), -np.ones(f.size, np.int64)])
    fp = np.concatenate([f, f])
    fn = np.concatenate([fn_up, fn_dn])
    return thresholds, orient, fp, fn

