"""Agents whose play is a sequence of *segments*: one arm played for a known number of rounds.

DP-SE (an arm's block of R_e pulls in an epoch), AdaP-UCB/KLUCB (an episode: play one arm until
its count doubles) and RNM-FTNL (a global epoch of 2^s rounds on the leader) all decide only at
the end of a segment. A :class:`SegmentAgent` keeps, per repetition, the current arm
(``self.arm``), the rounds left in its segment (``self.left``) and the reward sums of the segment
(``self.Phi``: the played arm's reward under bandit feedback, the whole vector under full
information); a subclass implements :meth:`SegmentAgent.end_segment` (release, decide, start the
next segment).

Two engines with identical actions (tested): the plain per-round loop (``select``/``update``,
vectorised across repetitions) and :meth:`SegmentAgent.run_chunk`, which jumps from segment end to
segment end per repetition; its sums are running sums continued from the carry (``cumsum``), the
step loop's floats.
"""

from __future__ import annotations

import abc

import numpy as np

from bandits.actions import Feedback
from bandits.policy import Agent, Outcomes, RunContext

__all__ = ["SegmentAgent"]


class SegmentAgent(Agent):
    """Base of segment-structured agents (module docstring). Subclasses set ``self.arm``,
    ``self.left`` (and may read ``self.Phi``) in ``__init__`` and :meth:`end_segment`."""

    def __init__(self, run: RunContext, feedback: Feedback, engine: str = "fast") -> None:
        super().__init__(run)
        self.full = Feedback(feedback) is Feedback.FULL
        self.engine = engine
        self.arm = np.zeros(self.reps, dtype=np.intp)
        self.left = np.ones(self.reps, dtype=np.int64)
        self.Phi = np.zeros((self.reps, self.n_arms))

    @abc.abstractmethod
    def end_segment(self, rows: np.ndarray, t: int) -> None:
        """The segments of repetitions ``rows`` ended with round ``t`` (their last reward is in
        ``Phi``): release what the algorithm releases, then set the next ``arm``/``left``."""

    def select(self, t: int) -> np.ndarray:
        return self.arm.copy()

    def update(self, t: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        if self.full:
            self.Phi += feedback
        else:
            self.Phi[self.rows, actions] += feedback
        self.left -= 1
        done = np.flatnonzero(self.left == 0)
        if done.size:
            self.end_segment(done, t)

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        if self.engine == "step":
            return super().run_chunk(t0, t1, outcomes)
        table = outcomes.table
        C = t1 - t0
        actions = np.empty((self.reps, C), dtype=np.intp)
        k0 = self._synchronised(t0, C, table, actions)
        one = np.empty(1, dtype=np.intp)
        for r in range(self.reps):
            k = k0
            while k < C:
                a = int(self.arm[r])
                m = int(min(self.left[r], C - k))
                actions[r, k : k + m] = a
                if self.full:
                    block = np.concatenate([self.Phi[r][None, :], table[r, k : k + m, :]], axis=0)
                    self.Phi[r] = np.cumsum(block, axis=0)[-1]
                else:
                    block = np.concatenate([self.Phi[r, a : a + 1], table[r, k : k + m, a]])
                    self.Phi[r, a] = np.cumsum(block)[-1]
                self.left[r] -= m
                k += m
                if self.left[r] == 0:
                    one[0] = r
                    self.end_segment(one.copy(), t0 + k - 1)
        return actions

    def _synchronised(self, t0: int, C: int, table: np.ndarray, actions: np.ndarray) -> int:
        """Play segments for all repetitions at once while every repetition's segment ends in the
        same round (global epochs; the first pulls); return the first offset not played."""
        rows, k = self.rows, 0
        while k < C and self.reps > 1 and np.all(self.left == self.left[0]):
            m = int(min(self.left[0], C - k))
            actions[:, k : k + m] = self.arm[:, None]
            if self.full:
                block = np.concatenate([self.Phi[:, None, :], table[:, k : k + m, :]], axis=1)
                self.Phi[:] = np.cumsum(block, axis=1)[:, -1]
            else:
                vals = table[rows[:, None], np.arange(k, k + m)[None, :], self.arm[:, None]]
                block = np.concatenate([self.Phi[rows, self.arm][:, None], vals], axis=1)
                self.Phi[rows, self.arm] = np.cumsum(block, axis=1)[:, -1]
            self.left -= m
            k += m
            if self.left[0] == 0:
                self.end_segment(rows.copy(), t0 + k - 1)
        return k
