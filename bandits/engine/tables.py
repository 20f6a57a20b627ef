"""Outcome tables: the rewards of every arm in every round, drawn from each repetition's outcome
stream (common random numbers), chunk by chunk, with a neighbouring replacement applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bandits.actions import Feedback
from bandits.engine.bernoulli_stream import BernoulliStream
from bandits.engine.streams import RepStreams, StreamSeeds, rep_streams
from bandits.environments import BernoulliEnv, Environment, RewardTableEnv
from bandits.policy import Outcomes

if TYPE_CHECKING:
    from bandits.engine.replacement import Replacement

__all__ = [
    "reward_table",
]

_UNUSED = np.random.Generator(np.random.PCG64(0))
"""The generator handed to a fixed reward table, which draws nothing from it."""


def reward_table(
    env: Environment,
    horizon: int,
    seed: int | np.random.SeedSequence,
    rep: int = 0,
    replace: Replacement | None = None,
) -> np.ndarray:
    """The (T, N) outcome table that :func:`simulate` uses for repetition ``rep``.

    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> from bandits.references.policies import UCB1
    >>> env = BernoulliEnv((0.9, 0.1))
    >>> tab = reward_table(env, 5, seed=3)
    >>> res = simulate(UCB1(), env, 5, repetitions=1, seed=3, record_actions=True, progress=False)
    >>> obs = tab[np.arange(5), res.actions[0]]
    >>> bool(np.isclose(res.empirical_regret[0, -1], 0.9 * 5 - obs.sum()))
    True
    """
    rng = np.random.Generator(np.random.PCG64(rep_streams(seed, rep).rewards))
    tab = np.array(env.reward_chunk(rep, 0, horizon, rng), dtype=float)
    if replace is not None:
        replace.check(horizon, env.n_arms)
        replace.apply(tab[None], 0)
    return tab


class _Tables:
    """The outcome tables of repetitions ``reps``, chunk by chunk (as :func:`reward_table`)."""

    def __init__(self, env: Environment, reps: Sequence[int], streams: Sequence[RepStreams]) -> None:
        self.env, self.reps = env, list(reps)
        # a RewardTableEnv with one (T, N) table draws nothing: share it, build no reward RNGs
        self.shared = isinstance(env, RewardTableEnv) and env.table.ndim == 2
        self.rngs = (
            [_UNUSED] * len(reps)  # a fixed table draws nothing
            if self.shared
            else StreamSeeds(tuple(streams), "rewards").generators()
        )
        self.stream: BernoulliStream | None = None

    def use_stream(self) -> None:
        """Offer every chunk's outcomes as a :class:`BernoulliStream` too, for an agent that reads
        them one at a time (a plain Bernoulli environment only; else nothing changes)."""
        if type(self.env) is BernoulliEnv and not self.shared:
            self.stream = BernoulliStream.of(self.env.means, self.rngs)

    def outcomes(self, t0: int, t1: int, replace: Replacement | None, feedback: Feedback) -> Outcomes:
        """Rounds ``t0 .. t1-1`` as :class:`Outcomes`: the table, drawn when first read, or (with
        :meth:`use_stream` and no replacement) the stream."""
        if self.stream is None or replace is not None:
            return Outcomes(self.chunk(t0, t1, replace), feedback)
        return _StreamOutcomes(self, t0, t1, feedback)

    def chunk(self, t0: int, t1: int, replace: Replacement | None) -> np.ndarray:
        env, R, N = self.env, len(self.reps), self.env.n_arms
        touched = replace is not None and t0 <= replace.round < t1
        if self.shared and not touched:
            # read-only view of the shared table (reward_chunk validates the horizon), no copies
            return np.broadcast_to(env.reward_chunk(self.reps[0], t0, t1, _UNUSED), (R, t1 - t0, N))
        table = np.empty((R, t1 - t0, N))
        if self.stream is not None:
            with self.stream.drawing():
                self._draw(t0, t1, table)
        else:
            self._draw(t0, t1, table)
        if replace is not None and touched:
            replace.apply(table, t0)
        return table

    def _draw(self, t0: int, t1: int, table: np.ndarray) -> None:
        for i, (r, g) in enumerate(zip(self.reps, self.rngs)):
            table[i] = self.env.reward_chunk(r, t0, t1, g)


class _StreamOutcomes(Outcomes):
    """A chunk whose table is drawn only if someone reads it; an agent may read the pulled arms'
    outcomes from :attr:`stream` instead (and set :attr:`observed`), never both."""

    def __init__(self, tables: _Tables, t0: int, t1: int, feedback: Feedback) -> None:
        super().__init__(np.empty((0, 0, 0)), feedback)
        self._tables, self._t0, self._t1 = tables, t0, t1
        self._drawn: np.ndarray | None = None

    @property
    def table(self) -> np.ndarray:
        if self._drawn is None:
            if self.observed is not None:
                raise RuntimeError("this chunk's outcomes were read from the stream; its table is gone")
            self._drawn = self._tables.chunk(self._t0, self._t1, None)
        return self._drawn

    @property
    def stream(self) -> BernoulliStream | None:
        """The stream, while the table has not been drawn."""
        return self._tables.stream if self._drawn is None else None
