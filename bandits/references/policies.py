"""Non-private reference policies: Beta-Bernoulli Thompson sampling and UCB1.

They run through the same pipeline as the private algorithms and declare no privacy
(:meth:`~bandits.policy.Policy.declare` returns None, reported as privacy "none").

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> res = simulate(UCB1(), BernoulliEnv((0.9, 0.1)), 200, repetitions=2, progress=False)
    >>> int(res.pulls[0, 0]) > 150, BetaTS().declare(200, 2) is None
    (True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bandits.engine.compiled import HAVE_NUMBA, beta_ts_chunk, ucb1_chunk, worth_compiling
from bandits.policy import Agent, Outcomes, Policy, RunContext
from dpaudit.validation import check_positive

__all__ = ["BetaTS", "UCB1"]


@dataclass(frozen=True)
class BetaTS(Policy):
    """Beta-Bernoulli Thompson sampling (Agrawal & Goyal 2012) with the Bernoulli-trial trick:
    a reward r ∈ [0, 1] counts as a success with probability r. Not private.

    ``engine``: ``"step"`` plays the rounds vectorised over repetitions (one Beta draw call per
    repetition per round), ``"numba"`` runs each repetition's rounds compiled (the same draws
    from the same generators: the same actions, bit for bit), ``"auto"`` the compiled loop when
    numba is available.

    >>> BetaTS().name
    'beta-ts'
    """

    engine: str = "auto"

    def __post_init__(self) -> None:
        if self.engine not in ("auto", "numba", "step"):
            raise ValueError(f"engine must be one of ['auto', 'numba', 'step'], got {self.engine!r}")
        if self.engine == "numba" and not HAVE_NUMBA:
            raise ValueError("engine 'numba' needs numba (pip install dpaudit[fast]); use 'auto' or 'step'")

    @property
    def name(self) -> str:
        return "beta-ts"

    def agent(self, run: RunContext) -> Agent:
        long_run = worth_compiling(run.reps * run.horizon)  # else loading numba costs more than it saves
        return _BetaTSAgent(run, compiled=self.engine == "numba" or (self.engine == "auto" and long_run))


class _BetaTSAgent(Agent):
    def __init__(self, run: RunContext, compiled: bool = False) -> None:
        super().__init__(run)
        self._compiled = compiled
        # two independent per-repetition streams: posterior draws, Bernoulli-trial uniforms
        self._draws, self._trials = run.random.child(0), run.random.child(1)
        self.alpha = np.ones((self.reps, self.n_arms))
        self.beta = np.ones((self.reps, self.n_arms))
        self._offsets = self.rows * self.n_arms
        self._U = np.empty((0, self.reps))
        self._t0 = 0

    def prepare(self, t0: int, t1: int) -> None:
        self._U = self._trials.random((t1 - t0,)).T  # (C, R)
        self._t0 = t0

    def select(self, t: int) -> np.ndarray:
        return self._draws.beta(self.alpha, self.beta).argmax(axis=1)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        idx = self._offsets + arms
        win = (self._U[t - self._t0] < rewards).astype(float)
        self.alpha.reshape(-1)[idx] += win
        self.beta.reshape(-1)[idx] += 1.0 - win

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        if not self._compiled:
            return super().run_chunk(t0, t1, outcomes)
        self.prepare(t0, t1)
        actions = np.empty((self.reps, t1 - t0), dtype=np.intp)
        table = np.ascontiguousarray(outcomes.table, dtype=float)
        U = np.ascontiguousarray(self._U.T)
        for r, g in enumerate(self._draws.generators):
            beta_ts_chunk(g, U[r], table[r], self.alpha[r], self.beta[r], actions[r])
        return actions


@dataclass(frozen=True)
class UCB1(Policy):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1): pull each arm once, then
    argmax_i S_i/n_i + sqrt(alpha · ln t / n_i) with t the number of rounds played. Not private,
    deterministic.

    >>> UCB1().name, UCB1(alpha=1.0).name
    ('ucb1', 'ucb1(alpha=1)')
    """

    alpha: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_positive("alpha", self.alpha))

    @property
    def name(self) -> str:
        return "ucb1" if self.alpha == 2.0 else f"ucb1(alpha={self.alpha:g})"

    def agent(self, run: RunContext) -> Agent:
        return _UCB1Agent(self.alpha, run)


class _UCB1Agent(Agent):
    def __init__(self, alpha: float, run: RunContext) -> None:
        super().__init__(run)
        self.alpha = alpha
        self.S = np.zeros((self.reps, self.n_arms))
        self.n = np.zeros((self.reps, self.n_arms))
        self._offsets = self.rows * self.n_arms
        self._compiled = worth_compiling(self.reps * self.horizon)  # the same arithmetic

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        """The compiled round loop (:func:`bandits.engine.compiled.ucb1_chunk`) for a long run,
        else the step loop: the same actions, bit for bit (tested)."""
        if not self._compiled:
            return super().run_chunk(t0, t1, outcomes)
        self.prepare(t0, t1)
        actions = np.empty((self.reps, t1 - t0), dtype=np.intp)
        ucb1_chunk(t0, self.alpha, self.S, self.n, outcomes.table, actions)
        return actions

    def select(self, t: int) -> np.ndarray:
        if t < self.n_arms:
            return np.full(self.reps, t, dtype=np.intp)
        idx = self.S / self.n + np.sqrt(self.alpha * math.log(t) / self.n)
        return idx.argmax(axis=1)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        i = self._offsets + arms
        self.S.reshape(-1)[i] += rewards
        self.n.reshape(-1)[i] += 1.0
