"""The arithmetic claims of Chen, Zheng, Zhou, Yang, Chen & Wang (ICML 2020) as pure functions,
each formula beside its source; ``tests/test_csb.py`` evaluates them.

* :func:`theorem4_integral` — ∫₀^N 8B sqrt(2 ln T/(ε² j)) dj with N = 128B² ln T/(ε²Δ²): equals
  256 B² ln T/(ε² Δ), not the 128 of Appendix A.
* :func:`laplace_tail` — P(|Lap(b)| ≥ b ln(1/δ)) = δ (Lemma 6's ingredient).

Example:
    >>> theorem4_integral(1.0, 10**5, 1.0, 0.2) / (128 * math.log(10**5) / 0.2)
    2.0
"""

from __future__ import annotations

import math

from dpaudit.validation import check_integer, check_positive

__all__ = ["theorem4_integral", "laplace_tail"]


def theorem4_integral(b: float, horizon: int, epsilon: float, gap: float) -> float:
    """∫₀^N 8B sqrt(2 ln T/(ε² j)) dj, N = 128 B² ln T/(ε² Δ²) (closed form: 16B sqrt(2 ln T/ε²) √N)."""
    B, e, g = check_positive("b", b), check_positive("epsilon", epsilon), check_positive("gap", gap)
    lt = math.log(check_integer("horizon", horizon, 2))
    n = 128 * B * B * lt / (e * e * g * g)
    return 16 * B * math.sqrt(2 * lt / (e * e)) * math.sqrt(n)


def laplace_tail(delta: float) -> float:
    """P(|Lap(b)| ≥ b ln(1/δ)) = exp(−ln(1/δ)) = δ (any b)."""
    d = float(delta)
    if not (0 < d < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return math.exp(-math.log(1 / d))
