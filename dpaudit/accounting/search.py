"""Turning an ε(δ) bound into a δ(ε) bound, conservatively."""

from __future__ import annotations

import math
from collections.abc import Callable

from dpaudit.accounting.composition import NotApplicable


def delta_from_epsilon(eps_of_delta: Callable[[float], float], target_eps: float, iters: int = 50) -> float:
    """The smallest δ (found by bisection in log δ, rounded up) with ε(δ) ≤ target.

    ``eps_of_delta`` must be non-increasing in δ and may raise NotApplicable for too small δ.
    50 halvings of [log 1e-300, 0] leave the log δ bracket below 7e-13 wide.
    Returns 1.0 when no δ < 1 reaches the target. The returned δ always satisfies
    ε(δ) ≤ target: bisection keeps the feasible end point.
    """

    def feasible(log_d: float) -> bool:
        try:
            return eps_of_delta(math.exp(log_d)) <= target_eps
        except NotApplicable:
            return False

    hi = math.log1p(-1e-12)
    if not feasible(hi):
        return 1.0
    lo = math.log(1e-300)
    if feasible(lo):
        return 1e-300
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return min(1.0, math.exp(hi))
