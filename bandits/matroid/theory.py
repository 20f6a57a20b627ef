"""The arithmetic claims of Chandak, Hu & Hegde (2023) as pure functions, each formula beside its
source; ``tests/test_matroid_bandits.py`` evaluates them.

* :func:`lemma1_ratio` — Lemma 1, eq. (16): for 1 ≥ Δ₁ ≥ … ≥ Δ_K > 0,
  Δ₁/(Δ₁ min{Δ₁, ε₀}) + Σ_{k≥2} Δ_k (1/(Δ_k min{Δ_k, ε₀}) − 1/(Δ_{k−1} min{Δ_{k−1}, ε₀}))
  ≤ 2/Δ_K + K/ε₀; returns LHS/RHS.
* :func:`lemma3_ratio` — Lemma 3 (Kveton et al. 2014, Lemma 3): Δ₁/Δ₁² + Σ Δ_k(1/Δ_k² −
  1/Δ_{k−1}²) ≤ 2/Δ_K; returns LHS/RHS.
* :func:`lemma4_sum` — the proof's own last line of Lemma 4,
  Σ_{t=1}^{n} (#epochs s ≤ log(t−1)) · (Kt)^{−3}, which the paper claims is O(1/(K² n²)) but
  whose t = 1 term alone is K^{−3}.

Example:
    >>> round(lemma4_sum(3, 10**4), 4), round(lemma4_sum(17, 10**6), 6)
    (0.0486, 0.000267)
"""

from __future__ import annotations

import numpy as np

from dpaudit.validation import check_integer, check_positive

__all__ = ["lemma1_ratio", "lemma3_ratio", "lemma4_sum"]


def _gaps(deltas: np.ndarray) -> np.ndarray:
    d = np.asarray(deltas, dtype=float)
    if d.ndim != 1 or d.size == 0 or np.any(d <= 0) or np.any(d > 1) or np.any(np.diff(d) > 0):
        raise ValueError("deltas must be a non-increasing sequence in (0, 1]")
    return d


def lemma1_ratio(deltas: np.ndarray, eps0: float) -> float:
    """LHS/RHS of Lemma 1, eq. (16), of Chandak, Hu & Hegde (2023) (≤ 1 if the lemma holds)."""
    d = _gaps(deltas)
    e = check_positive("eps0", eps0)
    g = 1.0 / (d * np.minimum(d, e))
    lhs = d[0] * g[0] + float(np.sum(d[1:] * (g[1:] - g[:-1])))
    return lhs / (2.0 / d[-1] + d.size / e)


def lemma3_ratio(deltas: np.ndarray) -> float:
    """LHS/RHS of Kveton et al. (2014) Lemma 3 as quoted by Chandak, Hu & Hegde (≤ 1 if it holds)."""
    d = _gaps(deltas)
    g = 1.0 / d**2
    lhs = d[0] * g[0] + float(np.sum(d[1:] * (g[1:] - g[:-1])))
    return lhs / (2.0 / d[-1])


def lemma4_sum(k: int, n: int) -> float:
    """Σ_{t=1}^n (1 + ⌊log₂ max(t−1, 1)⌋) (K t)^{−3}: the number of epochs s = 0..log(t−1) an
    arm can be in, times the Laplace tail P{|Lap(1/ε₀)| > 3 ln(Kt)/ε₀} = (Kt)^{−3}."""
    K = check_integer("k", k)
    t = np.arange(1, check_integer("n", n) + 1, dtype=float)
    epochs = 1.0 + np.floor(np.log2(np.maximum(t - 1.0, 1.0)))
    return float(np.sum(epochs * (K * t) ** -3.0))
