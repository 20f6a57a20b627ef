"""Reward functions of combinatorial semi-bandits, with their declared smoothness and monotonicity.

A super arm ``S`` (a set of ``K`` base arms) earns ``R(S, X)`` in a round with outcome vector
``X``; the learner's benchmark is the expected reward ``r_μ(S)`` (Chen et al. 2020, Assumption 1:
``E[R(S, X)] = r_μ(S)``). A :class:`RewardFunction` is a symmetric function ``f`` of the
chosen coordinates: ``r_μ(S) = f(μ_S)`` and ``R(S, X) = f(X_S)``. It declares

* ``b_inf(K)`` and ``b_1(K)`` — the constants of Assumption 2 of Chen et al. (B_p-bounded
  smoothness): ``|r_μ(S) − r_μ′(S)| ≤ B_p ‖μ_S − μ′_S‖_p`` for p = ∞ and p = 1;
* ``monotone`` — Assumption 3 (μ ≤ μ′ element-wise ⇒ r_μ(S) ≤ r_μ′(S));
* ``couplings`` — the joint laws of the outcomes under which ``E[f(X_S)] = f(μ_S)`` holds
  (Assumption 1): any law for the linear and average rewards, comonotone outcomes (one shared
  uniform per round) for the minimum, independent outcomes for the coverage probability.

Shipped functions (the rewards of the paper's examples and of our experiments):

====================  =====================  ======  ======  ===========  =====================
class                 f(v_1..v_K)            B_∞     B_1     monotone     E[f(X_S)] = f(μ_S)
====================  =====================  ======  ======  ===========  =====================
:class:`LinearSum`    Σ v_k                  K       1       yes          any coupling
:class:`Average`      Σ v_k / K              1       1/K     yes          any coupling
:class:`Bottleneck`   min_k v_k              1       1       yes          comonotone outcomes
:class:`Coverage`     1 − Π (1 − v_k)        K       1       yes          independent outcomes
====================  =====================  ======  ======  ===========  =====================

Proofs of the constants (each one line): Σ: |Σ(a − b)| ≤ ‖a − b‖₁ ≤ K‖a − b‖_∞; average:
divide by K; min: |min a − min b| ≤ max |a − b| ≤ ‖a − b‖₁; coverage: |Π(1 − a) − Π(1 − b)| ≤
Σ |a_k − b_k| for entries in [0, 1] (telescoping), ≤ K‖a − b‖_∞. Fact 1 of Chen et al.
(B_∞ ⇒ B_1 = B_∞; B_1 ⇒ B_∞ = K B_1) is consistent with every row; ``tests`` check the
inequalities on random vectors.

Every shipped function is symmetric and monotone, so the top-K arms by mean maximise it over
all K-subsets, and the greedy basis maximises it over the bases of a matroid (for Σ and the
average: Rado–Edmonds; for min: the greedy basis is lexicographically maximal; for coverage:
1 − Π(1 − μ) is increasing in Σ −ln(1 − μ_k), a linear objective with the same order as μ).
:attr:`RewardFunction.exact_by_greedy` records that.

Example:
    >>> import numpy as np
    >>> means = np.array([0.7, 0.5, 0.2])
    >>> acts = np.array([[0, 1], [1, 2]])
    >>> Bottleneck().expected(means, acts).tolist(), Average().expected(means, acts).tolist()
    ([0.5, 0.2], [0.6, 0.35])
    >>> round(float(Coverage().expected(means, acts[:1])[0]), 3), LinearSum().b_inf(4), Average().b_1(4)
    (0.85, 4.0, 0.25)
    >>> parse_reward("min")
    Bottleneck()
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.validation import check_integer

__all__ = [
    "COUPLINGS",
    "RewardFunction",
    "LinearSum",
    "Average",
    "Bottleneck",
    "Coverage",
    "REWARDS",
    "parse_reward",
]

COUPLINGS = ("independent", "comonotone", "latent", "paths")
"""Joint laws of one round's outcomes: independent arms; comonotone (one shared uniform drives
every arm: ``X_i = 1{U < μ_i}``); rows of a latent-user pool; perfectly correlated paths."""


def _gather(values: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``values[..., actions]`` for values (..., N) or (N,) and actions (..., K)."""
    v = np.asarray(values, dtype=float)
    a = np.asarray(actions)
    if v.ndim == 1:
        return v[a]
    return np.take_along_axis(v, a, axis=-1)


@dataclass(frozen=True)
class RewardFunction(abc.ABC):
    """A symmetric reward ``f`` of the chosen coordinates (module docstring)."""

    name: ClassVar[str]
    monotone: ClassVar[bool] = True
    couplings: ClassVar[tuple[str, ...]] = COUPLINGS
    exact_by_greedy: ClassVar[bool] = True

    @abc.abstractmethod
    def value(self, chosen: np.ndarray) -> np.ndarray:
        """``f`` of the chosen coordinates along the last axis (shape (..., K) → (...))."""

    @abc.abstractmethod
    def b_inf(self, k: int) -> float:
        """B_∞ of Assumption 2 (Chen et al. 2020) for super arms of size ``k``."""

    @abc.abstractmethod
    def b_1(self, k: int) -> float:
        """B_1 of Assumption 2 (Chen et al. 2020) for super arms of size ``k``."""

    def expected(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``r_μ(S) = f(μ_S)`` for every action (leading dimensions of ``actions`` kept)."""
        return self.value(_gather(means, actions))

    def realised(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``R(S, X) = f(X_S)`` for outcome vectors (..., N) and actions (..., K)."""
        return self.value(_gather(outcomes, actions))

    def unbiased_under(self, coupling: str) -> bool:
        """Whether ``E[R(S, X)] = r_μ(S)`` (Assumption 1) holds when outcomes follow ``coupling``."""
        if coupling not in COUPLINGS:
            raise ValueError(f"coupling must be one of {COUPLINGS}, got {coupling!r}")
        return coupling in self.couplings


@dataclass(frozen=True)
class LinearSum(RewardFunction):
    """``Σ_{i∈S} v_i`` (linear CSB, matroid bandits): B_1 = 1, B_∞ = K."""

    name: ClassVar[str] = "sum"

    def value(self, chosen: np.ndarray) -> np.ndarray:
        return np.asarray(chosen, dtype=float).sum(axis=-1)

    def b_inf(self, k: int) -> float:
        return float(check_integer("k", k))

    def b_1(self, k: int) -> float:
        check_integer("k", k)
        return 1.0


@dataclass(frozen=True)
class Average(RewardFunction):
    """``Σ_{i∈S} v_i / K``: B_∞ = 1, B_1 = 1/K (gaps shrink as 1/K)."""

    name: ClassVar[str] = "average"

    def value(self, chosen: np.ndarray) -> np.ndarray:
        return np.asarray(chosen, dtype=float).mean(axis=-1)

    def b_inf(self, k: int) -> float:
        check_integer("k", k)
        return 1.0

    def b_1(self, k: int) -> float:
        return 1.0 / check_integer("k", k)


@dataclass(frozen=True)
class Bottleneck(RewardFunction):
    """``min_{i∈S} v_i``: B_∞ = B_1 = 1. ``E[min X_S] = min μ_S`` needs comonotone outcomes."""

    name: ClassVar[str] = "min"
    couplings: ClassVar[tuple[str, ...]] = ("comonotone",)

    def value(self, chosen: np.ndarray) -> np.ndarray:
        return np.asarray(chosen, dtype=float).min(axis=-1)

    def b_inf(self, k: int) -> float:
        check_integer("k", k)
        return 1.0

    def b_1(self, k: int) -> float:
        check_integer("k", k)
        return 1.0


@dataclass(frozen=True)
class Coverage(RewardFunction):
    """``1 − Π_{i∈S} (1 − v_i)`` (probabilistic coverage of one target; the cascade reward):
    B_1 = 1, B_∞ = K. ``E[1 − Π(1 − X_S)] = 1 − Π(1 − μ_S)`` needs independent outcomes."""

    name: ClassVar[str] = "coverage"
    couplings: ClassVar[tuple[str, ...]] = ("independent",)

    def value(self, chosen: np.ndarray) -> np.ndarray:
        return 1.0 - np.prod(1.0 - np.asarray(chosen, dtype=float), axis=-1)

    def b_inf(self, k: int) -> float:
        return float(check_integer("k", k))

    def b_1(self, k: int) -> float:
        check_integer("k", k)
        return 1.0


REWARDS: dict[str, type[RewardFunction]] = {
    "sum": LinearSum,
    "average": Average,
    "min": Bottleneck,
    "coverage": Coverage,
}


def parse_reward(name: str) -> RewardFunction:
    """The reward function called ``name`` (one of :data:`REWARDS`)."""
    key = str(name).strip().lower()
    if key not in REWARDS:
        raise ValueError(f"reward must be one of {sorted(REWARDS)}, got {name!r}")
    return REWARDS[key]()
