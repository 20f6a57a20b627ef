"""The numba kernel of the cascading agents' round loop (used only when numba is installed and
enabled, :func:`bandits.engine.compiled.installed`; imported lazily by
:meth:`bandits.cascading.base.CascadeAgent.run_chunk`, so that numba is not imported with the package).

:func:`cascade_rounds` plays a block of rounds of an agent whose index is ``mean + c_t · isq``
(CascadeUCB1 and the observed-report LDP agents), one repetition at a time: the K items of
largest index (ties to the lower item: the k passes of ``argmax`` of
:func:`~bandits.cascading.base.top_k`), the click, and the update of the examined positions with
exactly the floating-point operations of the NumPy step loop (``S += y or 0.0``, ``T += 1 or 0``,
``mean = S/max(T, 1)``, ``isq = 1/sqrt(max(T, 1))``), so the results are bit-identical (tested in
``tests/test_cascade_kernel.py``). The NumPy step loop pays ≈ 15 array operations per round; the
kernel ≈ 100 ns per repetition and round.

Without numba the module still imports (``NUMBA`` is False) and the function runs as plain Python
(used only by the tests, on tiny inputs).

>>> isinstance(NUMBA, bool)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

njit: Any
try:
    from numba import njit
except ImportError:  # pragma: no cover - the 'fast' extra is not installed
    njit = None

__all__ = ["NUMBA", "cascade_rounds"]

NUMBA = njit is not None


def _jit(f: Callable[..., Any]) -> Callable[..., Any]:
    return f if njit is None else njit(cache=True)(f)


@_jit
def cascade_rounds(  # pragma: no cover - compiled
    table: Any, start: Any, coef: Any, noise: Any, noisy: Any,
    S: Any, T: Any, mean: Any, isq: Any, acts: Any, clicks: Any,
) -> None:
    """Play the chunk's rounds ``start .. C−1`` of every repetition r (module docstring).

    ``table`` (R₀, C, L) the outcomes (attractive: ≥ 0.5) of the repetitions, row r reading
    repetition ``r mod R₀`` (R₀ = R, or the repetitions of P stacked configurations); ``coef``
    (R, C) the index coefficient c_t of each round; ``noise`` (R, C, K) the noise added to each
    position's report (``scale · standard draw``; read only when ``noisy``); ``S``, ``T``,
    ``mean``, ``isq`` (R, L) updated in place; ``acts`` (R, C, K) and ``clicks`` (R, C; K = none) written."""
    R0, C, L = table.shape
    R, K = S.shape[0], acts.shape[2]
    u = np.empty(L)
    a = np.empty(K, dtype=np.int64)
    for r in range(R):
        for i in range(start, C):
            c = coef[r, i]
            for e in range(L):
                u[e] = mean[r, e] + c * isq[r, e]
            for j in range(K):
                best = 0
                bv = u[0]
                for e in range(1, L):
                    if u[e] > bv:
                        bv = u[e]
                        best = e
                a[j] = best
                acts[r, i, j] = best
                u[best] = -np.inf
            click = K
            for j in range(K):
                if table[r % R0, i, a[j]] >= 0.5:
                    click = j
                    break
            clicks[r, i] = click
            for j in range(K):
                e = a[j]
                y = 1.0 if j == click else 0.0
                if noisy:
                    y = y + noise[r, i, j]
                if j <= click:
                    S[r, e] += y
                    T[r, e] += 1.0
                else:
                    S[r, e] += 0.0
                    T[r, e] += 0.0
                t = T[r, e]
                tp = max(t, 1.0)
                mean[r, e] = S[r, e] / tp if t > 0 else math.inf
                isq[r, e] = 1.0 / math.sqrt(tp)
