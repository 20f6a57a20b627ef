"""The Thompson-sampling audit's block statistics as they were before the lookup tables (issue 10
follow-up): the reference that ``bandits.thompson.audit``'s faster versions must equal bit for bit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from bandits.thompson.audit_designs import NeighbourTables

_SQRT_HALF = math.sqrt(0.5)


def holder_counts(a: np.ndarray, hold: np.ndarray, start: np.ndarray) -> np.ndarray:
    """n_j(t): pulls of the holder j before each private round, shape (R, L)."""
    hit = a == hold[:, None].astype(a.dtype)
    n = np.cumsum(hit, axis=1, dtype=np.float64)
    n -= hit
    n += start[np.arange(a.shape[0]), hold][:, None]
    return n


def score_statistic(a: np.ndarray, hold: np.ndarray, start: np.ndarray, c: float) -> np.ndarray:
    """Σ_t (1{a_t = j} − 1/N)/sqrt(c(n_j(t) + 1)) over the private rounds (module docstring).

    >>> import numpy as np
    >>> s = score_statistic(np.array([[1, 0]]), np.array([1]), np.array([[1.0, 1.0]]), 1.0)
    >>> bool(np.isclose(s[0], 0.5 / np.sqrt(2) - 0.5 / np.sqrt(3)))
    True
    """
    N = start.shape[1]
    hit = a == hold[:, None].astype(a.dtype)
    w = 1.0 / np.sqrt(c * (holder_counts(a, hold, start) + 1.0))
    return ((hit - 1.0 / N) * w).sum(axis=1)


def exact_two(a: np.ndarray, hold: np.ndarray, start: np.ndarray, tables: NeighbourTables, c: float,
               side: int) -> dict[str, Any]:  # fmt: skip
    """:func:`_exact_block` for N = 2 on (rows, rounds) arrays: P(a_t = j | h_t) =
    Φ((μ_j − μ_o)/sqrt(σ_j² + σ_o²)) with μ, σ from the counts (constant columns)."""
    cols = np.asarray(tables.columns)
    R, L = a.shape
    Ls, gs, gv = np.empty(R), 0.0, 0.0
    k = np.arange(L, dtype=np.float64)
    for s0 in range(0, R, 512):
        aa, hh, st = a[s0 : s0 + 512], hold[s0 : s0 + 512], start[s0 : s0 + 512]
        r = np.arange(aa.shape[0])
        hit = aa == hh[:, None].astype(aa.dtype)
        nj = np.cumsum(hit, axis=1, dtype=np.float64)
        nj -= hit
        no = k[None, :] - nj + st[r, 1 - hh][:, None]
        nj += st[r, hh][:, None]
        cj, co = cols[hh][:, None], cols[1 - hh][:, None]
        inv_j, inv_o = 1.0 / (nj + 1.0), 1.0 / (no + 1.0)
        scale = np.sqrt(c * (inv_j + inv_o))
        base = (cj * nj - cj) * inv_j - co * no * inv_o  # μ_j − μ_o without the changed reward
        sign = np.where(hit, 1.0, -1.0)
        lp = []
        for v in tables.values:
            x = (base + v * inv_j) / scale
            lp.append(np.log(0.5 * special.erfc(-sign * x * _SQRT_HALF)))
            if v == tables.values[side]:
                pj = 0.5 * special.erfc(-x * _SQRT_HALF)
        Ls[s0 : s0 + 512] = (lp[0] - lp[1]).sum(axis=1)
        gs += float(np.sum(hit - pj))
        gv += float(np.sum(pj * (1.0 - pj)))
    return {"L": Ls, "gof_sum": gs, "gof_var": gv, "rule": {"rule": "closed form (2 arms)"}}
