"""What an action is, what it earns, and what it lets the learner see.

A *structure* (:class:`ActionStructure`) belongs to the problem: a single arm, a set of arms
(semi-bandit, e.g. top-K or a matroid basis) or an ordered list (cascade). It defines the
shape of one action, its expected reward under the arms' means (for pseudo-regret), its
realised reward under one round's outcome vector (for empirical regret) and the optimum.

A *feedback model* (:class:`Feedback`) belongs to the algorithm: what it observes after
playing — the chosen arm's reward (bandit), every chosen arm's outcome (semi-bandit), the
position of the first click (cascade), or the whole outcome vector (full information).
:func:`observe` computes it for R repetitions at once.

Every round the environment draws one outcome vector of all N arms (a row of the reward
table); a neighbouring input changes one unit of privacy (one reward, one row).

Example:
    >>> import numpy as np
    >>> out = np.array([[0.0, 1.0, 1.0, 0.0]])                 # one repetition, N = 4
    >>> observe(Feedback.CASCADE, out, np.array([[3, 2, 1]])).tolist()   # item 2 at position 1
    [1]
    >>> observe(Feedback.SEMI_BANDIT, out, np.array([[3, 2]])).tolist()
    [[0.0, 1.0]]
    >>> Ranking(2).expected_reward(np.array([0.5, 0.5, 0.1]), np.array([[0, 1]])).tolist()
    [0.75]
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from enum import Enum

import numpy as np

from dpaudit.validation import check_integer

__all__ = ["Feedback", "observe", "ActionStructure", "SingleArm", "KDistinct", "TopK", "Ranking"]


class Feedback(str, Enum):
    """What a learner observes after playing."""

    BANDIT = "bandit"
    SEMI_BANDIT = "semi-bandit"
    CASCADE = "cascade"
    FULL = "full-information"


def observe(model: Feedback, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The feedback of one round for R repetitions.

    ``outcomes`` (R, N): the round's outcome vectors; ``actions``: (R,) arms or (R, K) sets /
    lists. Returns (R,) rewards (bandit), (R, K) outcomes (semi-bandit), (R,) click positions
    in 0..K (K = no click; an item is attractive when its outcome is ≥ 1/2) (cascade), or the
    (R, N) outcome vectors (full information).
    """
    rows = np.arange(outcomes.shape[0])
    if model is Feedback.BANDIT:
        return outcomes[rows, actions]
    if model is Feedback.FULL:
        return outcomes
    if model is Feedback.SEMI_BANDIT:
        return outcomes[rows[:, None], actions]
    if model is Feedback.CASCADE:
        hit = outcomes[rows[:, None], actions] >= 0.5
        return np.where(hit.any(axis=1), hit.argmax(axis=1), actions.shape[1])
    raise ValueError(f"model must be a Feedback, got {model!r}")


@dataclass(frozen=True)
class ActionStructure(abc.ABC):
    """The actions of a problem and their rewards (module docstring)."""

    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, ...]:
        """Shape of one action: () for one arm, (K,) for a set or list."""

    @abc.abstractmethod
    def expected_reward(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Expected reward of each action (leading dimensions kept) under the arms' means."""

    @abc.abstractmethod
    def realised_reward(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Reward of each action under the outcome vectors ``outcomes`` (..., N)."""

    @abc.abstractmethod
    def optimum(self, means: np.ndarray) -> float:
        """The largest expected reward of one action (the regret benchmark)."""

    def validate(self, n_arms: int) -> None:  # noqa: B027 - a hook; most structures fit any N
        """Raise ``ValueError`` if the structure does not fit ``n_arms`` arms."""

    def valid(self, actions: np.ndarray, n_arms: int) -> bool:
        """Whether every action is well formed (arms in range; sets and lists without repeats)."""
        a = np.asarray(actions)
        if a.shape[a.ndim - len(self.shape) :] != self.shape or a.size == 0:
            return a.size == 0
        if a.min() < 0 or a.max() >= n_arms:
            return False
        if self.shape:
            s = np.sort(a.reshape(-1, self.shape[0]), axis=1)
            return bool(np.all(s[:, 1:] != s[:, :-1]))
        return True


@dataclass(frozen=True)
class SingleArm(ActionStructure):
    """Play one arm; earn its reward.

    >>> SingleArm().expected_reward(np.array([0.2, 0.7]), np.array([[1, 0]])).tolist()
    [[0.7, 0.2]]
    """

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def expected_reward(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.asarray(means)[actions]

    def realised_reward(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.take_along_axis(outcomes, np.asarray(actions)[..., None], axis=-1)[..., 0]

    def optimum(self, means: np.ndarray) -> float:
        return float(np.max(means))


@dataclass(frozen=True)
class KDistinct(ActionStructure):
    """Base of structures whose action is ``k`` distinct arms (a set or an ordered list)."""

    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_integer("k", self.k))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.k,)

    def validate(self, n_arms: int) -> None:
        if self.k > n_arms:
            raise ValueError(f"k must be in [1, {n_arms}] (the number of arms), got {self.k}")


@dataclass(frozen=True)
class TopK(KDistinct):
    """Play a set of ``k`` distinct arms; earn the sum of their outcomes (linear reward).

    >>> TopK(2).optimum(np.array([0.1, 0.5, 0.3]))
    0.8
    """

    def expected_reward(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.asarray(means)[actions].sum(axis=-1)

    def realised_reward(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return np.take_along_axis(outcomes, np.asarray(actions), axis=-1).sum(axis=-1)

    def optimum(self, means: np.ndarray) -> float:
        return float(np.sort(np.asarray(means))[::-1][: self.k].sum())


@dataclass(frozen=True)
class Ranking(KDistinct):
    """Recommend an ordered list of ``k`` distinct items; earn 1 if the user clicks (some item
    is attractive): expected reward 1 − Π_k (1 − w_{a_k}) with independent attractions."""

    def expected_reward(self, means: np.ndarray, actions: np.ndarray) -> np.ndarray:
        return 1.0 - np.prod(1.0 - np.asarray(means)[actions], axis=-1)

    def realised_reward(self, outcomes: np.ndarray, actions: np.ndarray) -> np.ndarray:
        hit = np.take_along_axis(outcomes, np.asarray(actions), axis=-1) >= 0.5
        return hit.any(axis=-1).astype(float)

    def optimum(self, means: np.ndarray) -> float:
        top = np.sort(np.asarray(means))[::-1][: self.k]
        return float(1.0 - np.prod(1.0 - top))
