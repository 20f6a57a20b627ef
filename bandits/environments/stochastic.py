"""Stochastic K-armed bandit environments with common random numbers.

Every stochastic environment turns i.i.d. uniforms ``U[t, i] ~ U(0, 1)`` into rewards by the
inverse CDF of arm ``i``. The simulator draws those uniforms from one reward stream per
repetition, so for a given seed *every* policy (and every environment) sees the same
uniforms at (repetition, round, arm): a paired, common-random-numbers design. Rewards of a
round are drawn for all arms, including the ones not pulled, which is what makes a
neighbouring stream ("replace the reward of round τ on arm j") well defined.

Environments
    :class:`BernoulliEnv` (``r = 1{U < μ_i}``),
    :class:`TruncatedExponentialEnv` (density ∝ λ e^{−λx} on [0, 1], i.e. Exp(λ) conditioned
    on x ≤ 1 — *not* clipped),
    :class:`RewardTableEnv` (a fixed table of rewards, e.g. an adversarial or neighbouring
    stream).

:func:`parse_env` reads the command-line spec ``"bernoulli:0.75,0.5"`` /
``"truncexp:0.1,1,2"``.

Example:
    >>> import numpy as np
    >>> env = parse_env("truncexp:0.1,1,2,5,10")
    >>> np.round(env.means, 3).tolist()
    [0.492, 0.418, 0.343, 0.193, 0.1]
    >>> env.best_arm, env.n_arms
    (0, 5)
    >>> BernoulliEnv((0.2, 0.7)).rewards_from_uniforms(np.array([[0.1, 0.9]])).tolist()
    [[1.0, 0.0]]
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from bandits.actions import ActionStructure, SingleArm
from dpaudit.validation import check_positive, check_probability

__all__ = [
    "Environment",
    "StochasticEnv",
    "BernoulliEnv",
    "TruncatedExponentialEnv",
    "RewardTableEnv",
    "parse_env",
    "truncexp_mean",
]


def _check_unit(name: str, value: float) -> float:
    return check_probability(name, value, low_open=False, high_open=False)


def truncexp_mean(rate: float) -> float:
    """Mean of Exp(``rate``) conditioned on x ≤ 1: 1/λ − e^{−λ}/(1 − e^{−λ}).

    >>> round(truncexp_mean(0.1), 4), round(truncexp_mean(10.0), 4), truncexp_mean(1e6)
    (0.4917, 0.1, 1e-06)
    """
    lam = check_positive("rate", rate)
    return 1.0 / lam - math.exp(-lam) / -math.expm1(-lam)  # e^{-λ}/(1-e^{-λ}), no overflow for large λ


@dataclass(frozen=True)
class Environment(abc.ABC):
    """Base class: a stationary K-armed bandit with rewards in [0, 1].

    Subclasses define :attr:`means`, :attr:`spec` and :meth:`reward_chunk` (one outcome vector
    of all arms per round); :attr:`structure` says what an action is (one arm by default).
    Rounds are 0-based.
    """

    @property
    @abc.abstractmethod
    def means(self) -> np.ndarray:
        """The arms' mean rewards, shape (K,)."""

    @property
    def n_arms(self) -> int:
        return int(self.means.size)

    @property
    def best_mean(self) -> float:
        return float(self.means.max())

    @property
    def best_arm(self) -> int:
        return int(self.means.argmax())

    @property
    def gaps(self) -> np.ndarray:
        """Δ_i = μ* − μ_i."""
        return self.best_mean - self.means

    @property
    def structure(self) -> ActionStructure:
        """The problem's actions (default: play one arm). Combinatorial problems override it."""
        return SingleArm()

    @property
    def optimum(self) -> float:
        """The largest expected reward of one action (the regret benchmark)."""
        return self.structure.optimum(self.means)

    @property
    @abc.abstractmethod
    def spec(self) -> str:
        """A short, parseable description (``parse_env(env.spec)`` rebuilds stochastic envs)."""

    @abc.abstractmethod
    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        """Rewards of rounds ``t0 .. t1-1`` of repetition ``rep``, shape (t1 − t0, n_arms)."""


@dataclass(frozen=True)
class StochasticEnv(Environment):
    """Base class of environments with i.i.d. rewards drawn by a per-arm inverse CDF."""

    @abc.abstractmethod
    def rewards_from_uniforms(self, u: np.ndarray) -> np.ndarray:
        """Map uniforms of shape (rounds, arms) to rewards by the per-arm inverse CDF."""

    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        """Rewards of rounds ``t0 .. t1-1`` of repetition ``rep``, shape (t1 − t0, n_arms).

        Stochastic environments draw ``rng.random((t1 - t0, n_arms))`` and apply the inverse
        CDF; since NumPy generators fill arrays sequentially, consecutive calls over
        consecutive chunks give the same table whatever the chunk sizes.
        """
        return self.rewards_from_uniforms(rng.random((t1 - t0, self.n_arms)))


@dataclass(frozen=True)
class BernoulliEnv(StochasticEnv):
    """Bernoulli arms: reward of arm i in round t is ``1{U[t, i] < p_i}``.

    >>> BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25)).gaps.tolist()
    [0.0, 0.125, 0.25, 0.375, 0.5]
    """

    probs: tuple[float, ...]

    def __post_init__(self) -> None:
        p = tuple(_check_unit(f"probs[{i}]", v) for i, v in enumerate(np.atleast_1d(self.probs)))
        if len(p) < 2:
            raise ValueError(f"probs must have at least 2 arms, got {len(p)}")
        object.__setattr__(self, "probs", p)

    @cached_property
    def means(self) -> np.ndarray:
        m = np.array(self.probs, dtype=float)
        m.setflags(write=False)
        return m

    @property
    def spec(self) -> str:
        return "bernoulli:" + ",".join(repr(p) for p in self.probs)

    def rewards_from_uniforms(self, u: np.ndarray) -> np.ndarray:
        return (u < self.means).astype(float)


@dataclass(frozen=True)
class TruncatedExponentialEnv(StochasticEnv):
    """Exp(λ_i) conditioned on x ≤ 1 (Ou, Avella Medina & Cummings 2024, §5.2), sampled by inverse
    CDF.

    F(x) = (1 − e^{−λx}) / (1 − e^{−λ}) on [0, 1], so x = −log(1 − u(1 − e^{−λ}))/λ.

    >>> env = TruncatedExponentialEnv((1.0, 5.0))
    >>> np.round(env.rewards_from_uniforms(np.array([[0.0, 1.0]])), 12).tolist()
    [[0.0, 1.0]]
    """

    rates: tuple[float, ...]

    def __post_init__(self) -> None:
        r = tuple(check_positive(f"rates[{i}]", v) for i, v in enumerate(np.atleast_1d(self.rates)))
        if len(r) < 2:
            raise ValueError(f"rates must have at least 2 arms, got {len(r)}")
        object.__setattr__(self, "rates", r)

    @cached_property
    def means(self) -> np.ndarray:
        m = np.array([truncexp_mean(r) for r in self.rates], dtype=float)
        m.setflags(write=False)
        return m

    @property
    def spec(self) -> str:
        return "truncexp:" + ",".join(repr(r) for r in self.rates)

    def rewards_from_uniforms(self, u: np.ndarray) -> np.ndarray:
        lam = np.array(self.rates, dtype=float)
        x = -np.log1p(u * np.expm1(-lam)) / lam
        return np.clip(x, 0.0, 1.0)  # guards the last ulp only; the law is not clipped


@dataclass(frozen=True, eq=False)
class RewardTableEnv(Environment):
    """A fixed reward table: shape (T, N) shared by all repetitions, or (R, T, N) per repetition.

    ``arm_means`` are the means used for regret (default: column means of the table). Use it
    for neighbouring streams built by hand, replayed data or adversarial sequences.
    ``action_structure`` is the problem's structure (default: one arm), e.g. a set of arms for
    the audit of a combinatorial policy on fixed neighbouring tables.

    >>> env = RewardTableEnv(np.array([[1.0, 0.0], [0.0, 0.0]]))
    >>> env.means.tolist(), env.horizon
    ([0.5, 0.0], 2)
    """

    table: np.ndarray = field(repr=False)
    arm_means: tuple[float, ...] | None = None
    action_structure: ActionStructure | None = None

    def __post_init__(self) -> None:
        tab = np.array(self.table, dtype=float, copy=True)
        if tab.ndim not in (2, 3):
            raise ValueError(f"table must have shape (T, N) or (R, T, N), got shape {tab.shape}")
        if tab.shape[-1] < 2 or tab.shape[-2] < 1:
            raise ValueError(f"table needs >= 1 round and >= 2 arms, got shape {tab.shape}")
        if not np.all(np.isfinite(tab)) or tab.min() < 0.0 or tab.max() > 1.0:
            raise ValueError("table entries must be in [0, 1]")
        tab.setflags(write=False)
        object.__setattr__(self, "table", tab)
        if self.arm_means is not None:
            m = tuple(_check_unit(f"arm_means[{i}]", v) for i, v in enumerate(self.arm_means))
            if len(m) != tab.shape[-1]:
                raise ValueError(f"arm_means must have {tab.shape[-1]} entries, got {len(m)}")
            object.__setattr__(self, "arm_means", m)
        if self.action_structure is not None:
            if not isinstance(self.action_structure, ActionStructure):
                raise ValueError(
                    f"action_structure must be an ActionStructure, got {type(self.action_structure).__name__}"
                )
            self.action_structure.validate(tab.shape[-1])

    @property
    def structure(self) -> ActionStructure:
        return SingleArm() if self.action_structure is None else self.action_structure

    @property
    def horizon(self) -> int:
        return int(self.table.shape[-2])

    @property
    def means(self) -> np.ndarray:
        if self.arm_means is not None:
            return np.array(self.arm_means, dtype=float)
        return self.table.reshape(-1, self.table.shape[-1]).mean(axis=0)

    @property
    def spec(self) -> str:
        return f"table:{'x'.join(str(s) for s in self.table.shape)}"

    def reward_chunk(self, rep: int, t0: int, t1: int, rng: np.random.Generator) -> np.ndarray:
        if t1 > self.horizon:
            raise ValueError(f"horizon must be <= the table's {self.horizon} rounds, got {t1}")
        if self.table.ndim == 3:
            if rep >= self.table.shape[0]:
                raise ValueError(f"repetitions must be <= the table's {self.table.shape[0]}, got rep {rep}")
            return self.table[rep, t0:t1]
        return self.table[t0:t1]


_KINDS = {"bernoulli": BernoulliEnv, "truncexp": TruncatedExponentialEnv}
MAX_ARMS = 10_000
"""The most arms a command-line spec may list (a run's state is arrays of shape (R, N))."""


def parse_env(spec: str) -> Environment:
    """Parse ``"bernoulli:p1,p2,..."`` or ``"truncexp:λ1,λ2,..."`` into an environment.

    >>> parse_env("bernoulli:0.75,0.25")
    BernoulliEnv(probs=(0.75, 0.25))
    >>> parse_env("gauss:0.1,0.2")
    Traceback (most recent call last):
    ...
    ValueError: spec kind must be one of ['bernoulli', 'truncexp'], got 'gauss'
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"spec must look like 'bernoulli:0.75,0.5' or 'truncexp:0.1,1', got {spec!r}")
    kind, _, body = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in _KINDS:
        raise ValueError(f"spec kind must be one of {sorted(_KINDS)}, got {kind!r}")
    parts = [p.strip() for p in body.split(",")]
    if any(p == "" for p in parts):
        raise ValueError(f"spec parameters must be a comma-separated list of numbers, got {body!r}")
    if len(parts) > MAX_ARMS:
        raise ValueError(f"spec must list at most {MAX_ARMS} arms, got {len(parts)}")
    values = []
    for p in parts:
        try:
            values.append(float(p))
        except ValueError:
            raise ValueError(f"spec parameter {p!r} is not a number (in {spec!r})") from None
    return _KINDS[kind](tuple(values))
