"""Combinatorial actions: sets of arms with a reward function and an (α-approximation) oracle.

Two :class:`~bandits.actions.ActionStructure` s join :class:`~bandits.actions.TopK` (the linear
top-K case) and :class:`~bandits.actions.Ranking` (the cascade list):

* :class:`SemiBandit` ``(k, reward)`` — any k distinct arms of the N (the uniform matroid),
  earning a :class:`~bandits.structures.rewards.RewardFunction` of their outcomes (sum, average, minimum,
  coverage). ``SemiBandit(k, LinearSum())`` is :class:`TopK` ``(k)``; the environment grammar
  builds ``TopK`` for the linear case so that nothing is duplicated.
* :class:`MatroidBasis` ``(matroid, reward)`` — a basis of a matroid
  (:mod:`bandits.structures.matroids`), in greedy order.
* :class:`SuperArms` ``(actions, reward)`` — an explicit list of allowed sets, e.g. the m/K
  disjoint paths of the lower-bound instance of Chen et al. 2020 (Kveton et al. 2015), where the decision set
  is not a matroid; its oracle enumerates the list.

Every combinatorial structure — these two, ``TopK`` and ``Ranking`` — is seen by the
algorithms through :func:`problem`: a :class:`Problem` with the size ``k`` of an action, the
reward function (its declared B_∞, B_1, monotonicity), the **oracle** (scores of the N arms →
one action per row, vectorised over repetitions) and its approximation ratio ``alpha``.

**Oracles.** Top-k for the uniform matroid (``SemiBandit``, ``TopK``, ``Ranking``: the arms in
decreasing score, which is also the order a cascade list needs); the greedy maximum-weight basis
for a matroid. Both are exact (α = 1) for every shipped reward: they are symmetric and monotone
(see :mod:`bandits.structures.rewards`). **Ties** in the scores follow a documented, data-independent rule
(:func:`ranking`): ``"index"`` — the lower arm index first (a stable sort); ``"random"`` — a
uniformly random order among tied arms, from keys the caller draws from the policy's own
randomness (never from data). Exact ties matter: the UCBs of Chen et al. (2020) are capped at 1, so every
unexplored arm ties at 1.

**Regret benchmark.** :meth:`ActionStructure.optimum` returns ``α·opt`` — Definition 2 of Chen et al.
(2020) measures regret against α·β·opt for an (α, β)-approximation oracle (the
oracles here are deterministic, β = 1). For the exact oracles α = 1 and the benchmark is
``opt = max_S r_μ(S)``, computed by the oracle on the true means; for α < 1 ``opt`` is found by
enumerating the actions (:meth:`exact_optimum`, small problems only).

Example:
    >>> import numpy as np
    >>> from bandits.structures.rewards import Bottleneck
    >>> s = SemiBandit(2, Bottleneck())
    >>> s.optimum(np.array([0.5, 0.7, 0.6]))
    0.6
    >>> p = problem(s)
    >>> p.oracle(np.array([[0.5, 0.7, 0.6], [1.0, 1.0, 1.0]])).tolist()   # ties: lower index
    [[1, 2], [0, 1]]
    >>> from bandits.structures.linear_matroid import LinearMatroid
    >>> e1 = MatroidBasis(LinearMatroid.from_rows([[1, 0], [2, 0], [0, 1]]))
    >>> e1.k, e1.optimum(np.array([0.3, 0.4, 0.1]))
    (2, 0.5)
"""

from __future__ import annotations

import abc
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from bandits.actions import ActionStructure, Ranking, TopK
from bandits.structures.greedy import greedy
from bandits.structures.matroids import Matroid, UniformMatroid
from bandits.structures.rewards import Coverage, LinearSum, RewardFunction
from dpaudit.validation import check_integer

__all__ = [
    "TIE_RULES",
    "ranking",
    "SemiBandit",
    "MatroidBasis",
    "SuperArms",
    "Problem",
    "problem",
    "COMBINATORIAL",
]

TIE_RULES = ("index", "random")


def ranking(scores: np.ndarray, tie_keys: np.ndarray | None = None) -> np.ndarray:
    """Arms by decreasing score, shape (R, N) for scores (R, N): ties by lower index
    (``tie_keys=None``) or by increasing ``tie_keys`` (uniforms drawn by the caller).

    >>> ranking(np.array([[0.2, 0.9, 0.2]])).tolist()
    [[1, 0, 2]]
    >>> ranking(np.array([[0.2, 0.9, 0.2]]), np.array([[0.8, 0.5, 0.1]])).tolist()
    [[1, 2, 0]]
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim == 1:
        s = s[None, :]
    if np.isnan(s).any():
        raise ValueError("scores must not be NaN")
    if tie_keys is None:
        return np.argsort(-s, axis=-1, kind="stable")
    k = np.asarray(tie_keys, dtype=float).reshape(s.shape)
    return np.lexsort((k, -s), axis=-1)


@dataclass(frozen=True)
class Problem:
    """What an algorithm needs to know about a combinatorial structure (module docstring).

    Attributes:
        k: actions hold exactly k arms.
        reward: the reward function (declared B_∞, B_1, monotonicity).
        matroid: the decision set when it is a matroid (None: every k-subset, or ``candidates``).
        candidates: an explicit decision set, shape (n_actions, k) (None: not explicit).
        alpha: the oracle's approximation ratio (r_μ(oracle(μ)) ≥ α·opt).
    """

    k: int
    reward: RewardFunction
    matroid: Matroid | None = None
    alpha: float = 1.0
    candidates: np.ndarray | None = field(default=None, compare=False)

    def oracle(self, scores: np.ndarray, tie_keys: np.ndarray | None = None) -> np.ndarray:
        """One action per row of ``scores`` (R, N), shape (R, k), best arm first (for explicit
        candidates: the candidate maximising the reward of the scores; ties by candidate index,
        or by the smallest sum of its members' ``tie_keys``)."""
        if self.candidates is not None:
            s = np.atleast_2d(np.asarray(scores, dtype=float))
            value = self.reward.value(s[:, self.candidates])  # (R, n_actions)
            keys = None if tie_keys is None else np.atleast_2d(tie_keys)[:, self.candidates].sum(axis=-1)
            best = ranking(value, keys)[:, 0]
            return self.candidates[best].copy()
        order = ranking(scores, tie_keys)
        if self.matroid is None:
            return order[:, : self.k].copy()
        if self.matroid.n_elements != order.shape[1]:
            raise ValueError(f"scores must have {self.matroid.n_elements} columns, got {order.shape[1]}")
        return greedy(self.matroid, order)

    def b_inf(self) -> float:
        return self.reward.b_inf(self.k)

    def b_1(self) -> float:
        return self.reward.b_1(self.k)


class _Combinatorial(ActionStructure):
    """Shared behaviour of :class:`SemiBandit` and :class:`MatroidBasis`."""

    reward: RewardFunction
    alpha: float
    k: int  # a field (SemiBandit) or the matroid's rank (MatroidBasis)

    @abc.abstractmethod
    def _problem(self) -> Problem:
        """The combinatorial problem behind the structure (its oracle)."""

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.k,)

    def expected_reward(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return self.reward.expected(means, actions)

    def realised_reward(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return self.reward.realised(outcomes, actions)

    def exact_optimum(self, means: np.ndarray) -> float:
        """``opt = max_S r_μ(S)``: the oracle on the true means when it is exact, else by
        enumerating every action (at most 10⁶ of them)."""
        mu = np.asarray(means, dtype=float)
        if self.reward.exact_by_greedy and self.alpha == 1.0:
            best = self._problem().oracle(mu[None, :])
            return float(self.reward.expected(mu, best)[0])
        acts = self.actions(mu.size)
        return float(self.reward.expected(mu, acts).max())

    def optimum(self, means: np.ndarray) -> float:
        """The regret benchmark ``α·opt`` (module docstring)."""
        return self.alpha * self.exact_optimum(means)

    @abc.abstractmethod
    def actions(self, n_arms: int) -> np.ndarray:
        """Every action, one per row."""


def _check_alpha(alpha: float) -> float:
    a = float(alpha)
    if not (0.0 < a <= 1.0):
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    return a


def _check_reward(reward: object) -> RewardFunction:
    if not isinstance(reward, RewardFunction):
        raise ValueError(
            f"reward must be a bandits.structures.rewards.RewardFunction, got {type(reward).__name__}"
        )
    return reward


@dataclass(frozen=True)
class SemiBandit(_Combinatorial):
    """Play any ``k`` distinct arms; earn ``reward`` of their outcomes; observe each of them.

    >>> from bandits.structures.rewards import Average
    >>> SemiBandit(2, Average()).expected_reward(np.array([0.2, 0.4, 0.6]), np.array([[2, 1]])).tolist()
    [0.5]
    """

    k: int
    reward: RewardFunction = field(default_factory=LinearSum)
    alpha: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_integer("k", self.k))
        _check_reward(self.reward)
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))

    def validate(self, n_arms: int) -> None:
        if self.k > n_arms:
            raise ValueError(f"k must be in [1, {n_arms}] (the number of arms), got {self.k}")

    def _problem(self) -> Problem:
        return Problem(self.k, self.reward, None, self.alpha)

    def actions(self, n_arms: int) -> np.ndarray:
        if math.comb(n_arms, self.k) > 10**6:
            raise ValueError(f"too many actions to enumerate: C({n_arms}, {self.k}) > 10^6")
        return np.array(list(itertools.combinations(range(n_arms), self.k)), dtype=np.int64)


@dataclass(frozen=True)
class MatroidBasis(_Combinatorial):
    """Play a basis of ``matroid`` (in greedy order); earn ``reward`` of its outcomes.

    >>> from bandits.structures.matroids import PartitionMatroid
    >>> mb = MatroidBasis(PartitionMatroid((0, 0, 1), (1, 1)))
    >>> mb.k, mb.valid(np.array([[0, 2], [1, 2]]), 3), mb.valid(np.array([[0, 1]]), 3)
    (2, True, False)
    """

    matroid: Matroid = field(default_factory=lambda: UniformMatroid(1, 1))
    reward: RewardFunction = field(default_factory=LinearSum)
    alpha: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.matroid, Matroid):
            raise ValueError(
                f"matroid must be a bandits.structures.matroids.Matroid, got {type(self.matroid).__name__}"
            )
        _check_reward(self.reward)
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        if self.matroid.rank < 1:
            raise ValueError("matroid must have rank >= 1 (some element that is not a loop)")

    @property
    def k(self) -> int:  # type: ignore[override]  # the rank, where SemiBandit has a field
        return self.matroid.rank

    def validate(self, n_arms: int) -> None:
        if self.matroid.n_elements != n_arms:
            raise ValueError(
                f"n_arms must equal the matroid's ground set size {self.matroid.n_elements}, got {n_arms}"
            )

    def valid(self, actions: np.ndarray, n_arms: int) -> bool:
        if not super().valid(actions, n_arms):
            return False
        a = np.asarray(actions)
        if a.size == 0:
            return True
        uniq = np.unique(np.sort(a.reshape(-1, self.k), axis=1), axis=0)
        return all(self.matroid.is_basis(row.tolist()) for row in uniq)

    def _problem(self) -> Problem:
        return Problem(self.k, self.reward, self.matroid, self.alpha)

    def actions(self, n_arms: int) -> np.ndarray:
        if math.comb(n_arms, self.k) > 10**6:
            raise ValueError(f"too many subsets to enumerate: C({n_arms}, {self.k}) > 10^6")
        bases = [c for c in itertools.combinations(range(n_arms), self.k) if self.matroid.is_basis(c)]
        return np.array(bases, dtype=np.int64)


@dataclass(frozen=True)
class SuperArms(_Combinatorial):
    """An explicit decision set: ``actions`` lists the allowed sets (each of ``k`` distinct arms).

    >>> sa = SuperArms(((0, 1), (2, 3)))       # two disjoint paths of length 2
    >>> sa.k, sa.optimum(np.array([0.5, 0.5, 0.45, 0.45])), sa.valid(np.array([[0, 2]]), 4)
    (2, 1.0, False)
    """

    sets: tuple[tuple[int, ...], ...] = ()
    reward: RewardFunction = field(default_factory=LinearSum)
    alpha: float = 1.0

    def __post_init__(self) -> None:
        sets = tuple(
            tuple(check_integer(f"sets[{i}] entries", e, 0) for e in a) for i, a in enumerate(self.sets)
        )
        if not sets or len({len(a) for a in sets}) != 1 or not sets[0]:
            raise ValueError("sets must be a non-empty list of equally long, non-empty sets")
        if any(len(set(a)) != len(a) for a in sets):
            raise ValueError("sets must not repeat an arm within a set")
        object.__setattr__(self, "sets", sets)
        _check_reward(self.reward)
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))

    @property
    def k(self) -> int:  # type: ignore[override]  # the rank, where SemiBandit has a field
        return len(self.sets[0])

    def validate(self, n_arms: int) -> None:
        top = max(max(a) for a in self.sets)
        if top >= n_arms:
            raise ValueError(f"n_arms must exceed every arm of the sets (up to {top}), got {n_arms}")

    def valid(self, actions: np.ndarray, n_arms: int) -> bool:
        if not super().valid(actions, n_arms):
            return False
        allowed = {tuple(sorted(a)) for a in self.sets}
        a = np.asarray(actions).reshape(-1, self.k)
        return all(tuple(sorted(r)) in allowed for r in np.unique(a, axis=0).tolist())

    def _problem(self) -> Problem:
        return Problem(self.k, self.reward, None, self.alpha, np.array(self.sets, dtype=np.int64))

    def actions(self, n_arms: int) -> np.ndarray:
        return np.array(self.sets, dtype=np.int64)


COMBINATORIAL = (TopK, Ranking, SemiBandit, MatroidBasis, SuperArms)
"""Structures :func:`problem` understands (what combinatorial policies list as ``structures``)."""


def problem(structure: ActionStructure) -> Problem:
    """The :class:`Problem` of a combinatorial structure: ``TopK(k)`` is the linear top-k
    problem, ``Ranking(k)`` the top-k problem with the coverage (cascade) reward.

    >>> problem(TopK(3)).reward, problem(Ranking(2)).reward
    (LinearSum(), Coverage())
    """
    if isinstance(structure, TopK):
        return Problem(structure.k, LinearSum())
    if isinstance(structure, Ranking):
        return Problem(structure.k, Coverage())
    if isinstance(structure, _Combinatorial):
        return structure._problem()
    raise ValueError(
        f"structure must be one of {[c.__name__ for c in COMBINATORIAL]}, got {type(structure).__name__}"
    )
