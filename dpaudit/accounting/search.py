"""Turning an ε(δ) bound into a δ(ε) bound, conservatively."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpaudit.accounting.composition import NotApplicable
from dpaudit.numerics import bisect

_LOG_TINY = math.log(5e-324)


def delta_from_epsilon(eps_of_delta: Callable[[float], float], target_eps: float, iters: int = 60) -> float:
    """The smallest δ found (bisection in log δ over [log 5e-324, log(1 − 1e-12)]) with
    ε(δ) ≤ target.

    ``eps_of_delta`` must be non-increasing in δ and may raise NotApplicable for too small δ.
    The bisection (:func:`dpaudit.numerics.bisect`) keeps the feasible end, so the returned δ
    always satisfies ε(δ) ≤ target; 60 halvings of the 745-wide bracket leave it < 1e-15 wide.
    Returns 1.0 when no δ < 1 reaches the target, 5e-324 when every δ does.

    >>> round(delta_from_epsilon(lambda d: -math.log(d), 2.0), 6)  # ε(δ) = log(1/δ)
    0.135335
    """

    def infeasible(log_d: np.ndarray) -> np.ndarray:
        out = []
        for x in np.atleast_1d(np.asarray(log_d, dtype=float)).reshape(-1):
            try:
                out.append(not eps_of_delta(math.exp(float(x))) <= target_eps)
            except NotApplicable:
                out.append(True)
        return np.array(out).reshape(np.shape(log_d))

    hi = math.log1p(-1e-12)
    if bool(infeasible(np.array(hi))):
        return 1.0
    if not bool(infeasible(np.array(_LOG_TINY))):
        return 5e-324
    _, top = bisect(infeasible, _LOG_TINY, hi, iters=iters)
    return min(1.0, float(np.nextafter(np.exp(float(top)), np.inf)))
