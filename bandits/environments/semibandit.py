"""Environments of combinatorial semi-bandits: one outcome vector of all N arms per round.

Like every environment (:mod:`bandits.environments`) they draw the whole outcome vector of a
round, also for arms that are not played (common random numbers; a neighbouring input replaces
one round's vector), and they expose the problem's action structure as ``structure``. The three
joint laws of the setting of Chen et al. (2020) (arms may be correlated within a round):

* :class:`SemiBanditEnv` — Bernoulli arms with means ``probs``, **independent**
  (``X_i = 1{U_i < μ_i}``) or **comonotone** (one uniform per round drives every arm,
  ``X_i = 1{U < μ_i}``, so ``min_{i∈S} X_i = 1{U < min μ_S}`` — the law under which the
  bottleneck reward satisfies Assumption 1 of Chen et al.);
* :class:`LatentUserEnv` — a pool of users (rows of a 0/1 or [0, 1] matrix); each round draws one
  user uniformly *with replacement* and the outcome vector is that user's row (Chandak, Hu &
  Hegde 2023, §5.2:
  "a random user is selected"; rewards of one round are correlated through the user);
* :class:`PathEnv` — the K-path instance of Chen et al. (Theorem 6/9, after Kveton et al. 2015): m/K
  disjoint paths of K arms, one Bernoulli per path copied to its K arms (perfect correlation
  within a path), paths independent; the decision set is the set of paths.

Each environment checks that the structure's reward satisfies Assumption 1
(``E[R(S, X)] = r_μ(S)``) under its joint law (:meth:`RewardFunction.unbiased_under`), so that
the empirical regret estimates the pseudo-regret. Its :attr:`spec` parses back with
:func:`bandits.environments.grammar.parse_combinatorial_env`.

Example:
    >>> import numpy as np
    >>> from bandits.actions import TopK
    >>> env = SemiBanditEnv((0.9, 0.5, 0.1), TopK(2))
    >>> env.optimum, env.spec
    (1.4, 'topk:k=2,means=0.9/0.5/0.1,reward=sum,coupling=independent')
    >>> rng = np.random.default_rng(0)
    >>> env.reward_chunk(0, 0, 3, rng).shape
    (3, 3)
    >>> from bandits.structures.combinatorial import SemiBandit
    >>> from bandits.structures.rewards import Bottleneck
    >>> SemiBanditEnv((0.9, 0.5), SemiBandit(1, Bottleneck()))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: reward 'min' does not satisfy E[R(S, X)] = r_mu(S) under independent outcomes; use ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bandits.actions import ActionStructure
from bandits.environments import Environment
from bandits.environments.specs import spec_for
from bandits.structures.combinatorial import SuperArms, problem
from bandits.structures.rewards import LinearSum, RewardFunction
from dpaudit.validation import check_integer, check_probability

__all__ = ["SemiBanditEnv", "LatentUserEnv", "PathEnv", "check_assumption1"]


def check_assumption1(structure: ActionStructure, coupling: str) -> None:
    """Raise ``ValueError`` unless the structure's reward is unbiased under ``coupling``."""
    reward = problem(structure).reward
    if not reward.unbiased_under(coupling):
        hint = f"; use coupling {reward.couplings[0]!r}" if reward.couplings else ""
        raise ValueError(
            f"reward {reward.name!r} does not satisfy E[R(S, X)] = r_mu(S) under {coupling} outcomes{hint}"
        )


def _spec(env: Environment, coupling: str) -> str:
    return spec_for(env.structure, env.means, coupling)


@dataclass(frozen=True)
class SemiBanditEnv(Environment):
    """Bernoulli arms with means ``probs``, independent or comonotone (module docstring).

    Attributes:
        probs: the arms' means.
        action_structure: the problem's structure (``TopK``, ``SemiBandit``, ``MatroidBasis``,
            ``SuperArms``, ``Ranking``).
        coupling: ``"independent"`` or ``"comonotone"``.
        name: the spec it was parsed from (default: generated).
    """

    probs: tuple[float, ...]
    action_structure: ActionStructure
    coupling: str = "independent"
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        p = tuple(
            check_probability(f"probs[{i}]", v, low_open=False, high_open=False)
            for i, v in enumerate(np.atleast_1d(np.asarray(self.probs, dtype=float)))
        )
        if len(p) < 2:
            raise ValueError(f"probs must have at least 2 arms, got {len(p)}")
        object.__setattr__(self, "probs", p)
        if not isinstance(self.action_structure, ActionStructure):
            raise ValueError(
                f"action_structure must be an ActionStructure, got {type(self.action_structure).__name__}"
            )
        if self.coupling not in ("independent", "comonotone"):
            raise ValueError(f"coupling must be 'independent' or 'comonotone', got {self.coupling!r}")
        self.action_structure.validate(len(p))
        check_assumption1(self.action_structure, self.coupling)

    @property
    def means(self) -> np.ndarray:
        return np.array(self.probs, dtype=float)

    @property
    def structure(self) -> ActionStructure:
        return self.action_structure

    @property
    def spec(self) -> str:
        return self.name or _spec(self, self.coupling)

    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        n = t1 - t0
        cols = self.n_arms if self.coupling == "independent" else 1
        u = rng.random((n, cols))  # sequential fill: the same table whatever the chunking
        return (u < self.means).astype(float)


@dataclass(frozen=True, eq=False)
class LatentUserEnv(Environment):
    """Each round, a uniformly random user of the ``pool`` (rows, values in [0, 1]) and its row.

    The arms' means are the pool's column means (Chandak, Hu & Hegde 2023, §5.2: w̄(e) =
    #ratings(e)/#users).

    >>> pool = np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0], [1, 1, 1]])
    >>> from bandits.actions import TopK
    >>> env = LatentUserEnv(pool, TopK(1), name="toy")
    >>> env.means.tolist(), env.n_users
    ([0.5, 0.75, 0.5], 4)
    """

    pool: np.ndarray = field(repr=False)
    action_structure: ActionStructure = field(default=None)  # type: ignore[assignment]
    name: str | None = None
    labels: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        pool = np.array(self.pool, dtype=float, copy=True)
        if pool.ndim != 2 or pool.shape[0] < 1 or pool.shape[1] < 2:
            raise ValueError(f"pool must have shape (users >= 1, arms >= 2), got {pool.shape}")
        if not np.all(np.isfinite(pool)) or pool.min() < 0 or pool.max() > 1:
            raise ValueError("pool entries must be in [0, 1]")
        pool.setflags(write=False)
        object.__setattr__(self, "pool", pool)
        if not isinstance(self.action_structure, ActionStructure):
            raise ValueError(
                f"action_structure must be an ActionStructure, got {type(self.action_structure).__name__}"
            )
        self.action_structure.validate(pool.shape[1])
        check_assumption1(self.action_structure, "latent")
        if self.labels is not None and len(self.labels) != pool.shape[1]:
            raise ValueError(f"labels must name the {pool.shape[1]} arms, got {len(self.labels)}")

    @property
    def n_users(self) -> int:
        return int(self.pool.shape[0])

    @property
    def means(self) -> np.ndarray:
        return self.pool.mean(axis=0)

    @property
    def structure(self) -> ActionStructure:
        return self.action_structure

    @property
    def spec(self) -> str:
        return self.name or f"latent-pool:users={self.n_users},arms={self.n_arms}"

    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        users = np.minimum((rng.random(t1 - t0) * self.n_users).astype(np.int64), self.n_users - 1)
        return self.pool[users]


@dataclass(frozen=True)
class PathEnv(Environment):
    """The K-path instance of Chen et al. (2020): ``len(path_means)`` disjoint paths of ``k`` arms
    each (path i = arms ``i·k .. i·k + k − 1``), one Bernoulli per path and round copied to its arms.

    >>> env = PathEnv((0.5, 0.45), 2)
    >>> env.means.tolist(), env.optimum, env.structure.sets
    ([0.5, 0.5, 0.45, 0.45], 1.0, ((0, 1), (2, 3)))
    """

    path_means: tuple[float, ...]
    k: int
    reward: RewardFunction = field(default_factory=LinearSum)
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        pm = tuple(
            check_probability(f"path_means[{i}]", v, low_open=False, high_open=False)
            for i, v in enumerate(np.atleast_1d(np.asarray(self.path_means, dtype=float)))
        )
        if len(pm) < 2:
            raise ValueError(f"path_means must have at least 2 paths, got {len(pm)}")
        object.__setattr__(self, "path_means", pm)
        object.__setattr__(self, "k", check_integer("k", self.k))
        if not isinstance(self.reward, RewardFunction):
            raise ValueError(f"reward must be a RewardFunction, got {type(self.reward).__name__}")
        check_assumption1(self.structure, "paths")

    @property
    def n_paths(self) -> int:
        return len(self.path_means)

    @property
    def means(self) -> np.ndarray:
        return np.repeat(np.array(self.path_means, dtype=float), self.k)

    @property
    def structure(self) -> ActionStructure:
        k = self.k
        return SuperArms(tuple(tuple(range(i * k, (i + 1) * k)) for i in range(self.n_paths)), self.reward)

    @property
    def spec(self) -> str:
        return self.name or _spec(self, "paths")

    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.random((t1 - t0, self.n_paths))
        return np.repeat((u < np.array(self.path_means)).astype(float), self.k, axis=1)
