"""The neighbouring reward tables of the Thompson-sampling audit (pre-registered designs).

Every design fixes two reward tables whose columns are constant — every arm pays ``arm_reward``
(1/2: all arms tied, so the changed arm stays competitive and every sampling round leaks) and one
``leader`` may pay a little more (a near tie) — except r_τ, the changed arm j's first observation
(τ = j·b, in the deterministic pre-pull; with b = 0 the whole round-0 row), which is 1 under R and
0 under R′. :func:`candidate_designs` holds one design per changed arm j (a bug on one arm cannot
hide behind the others) and a near tie with the changed arm 0.05 behind a leader.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bandits.thompson.policy import GaussianTS

__all__ = [
    "NeighbourTables",
    "TSNeighbour",
    "candidate_designs",
]


@dataclass(frozen=True)
class NeighbourTables:
    """Two fixed (T, N) reward tables and where they differ.

    ``null`` is R (changed reward = ``values[0]``), ``alt`` is R′; ``tau`` is the changed round;
    ``observer`` the arm that observes it (None when b = 0: whichever arm is pulled at round 0);
    ``columns`` the constant reward of every arm outside round τ.
    """

    null: np.ndarray
    alt: np.ndarray
    tau: int
    observer: int | None
    columns: tuple[float, ...]
    values: tuple[float, float]
    first_private_round: int


@dataclass(frozen=True)
class TSNeighbour:
    """A neighbouring pair of fixed reward tables for Gaussian TS (module docstring).

    ``arm`` (j) holds the changed reward, observed at its first pre-pull (τ = j·b); ``values`` =
    (r_τ under R, r_τ under R′); arm ``leader`` pays ``leader_reward`` in every round, every other
    arm ``arm_reward``. The default is the tie (all arms ½). With b = 0 the whole round-0 row is
    set to ``values``.

    >>> nb = TSNeighbour()
    >>> t = nb.tables(GaussianTS(b=2, c=1.0), 8, 2)
    >>> t.tau, t.observer, t.null[:, 1].tolist(), t.alt[:, 1].tolist()
    (2, 1, [0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5])
    """

    arm: int = 1
    values: tuple[float, float] = (1.0, 0.0)
    leader: int = 0
    leader_reward: float = 0.5
    arm_reward: float = 0.5

    def __post_init__(self) -> None:
        for name in ("arm", "leader"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.arm == self.leader:
            raise ValueError("arm (the changed arm) must differ from leader")
        vals = tuple(float(v) for v in self.values)
        if len(vals) != 2 or not all(0.0 <= v <= 1.0 for v in vals) or vals[0] == vals[1]:
            raise ValueError(f"values must be two different rewards in [0, 1], got {self.values!r}")
        object.__setattr__(self, "values", vals)
        for name in ("leader_reward", "arm_reward"):
            v = float(getattr(self, name))
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
            object.__setattr__(self, name, v)

    def describe(self) -> str:
        lead = (
            "all arms tied"
            if self.leader_reward == self.arm_reward
            else f"arm {self.leader} leads by {self.leader_reward - self.arm_reward:g}"
        )
        return f"arm {self.arm}'s first reward {self.values[0]:g} vs {self.values[1]:g}, {lead}"

    def tables(self, policy: GaussianTS, horizon: int, arms: int) -> NeighbourTables:
        """The two (T, N) tables for ``policy`` (its b decides τ)."""
        if max(self.arm, self.leader) >= arms:
            raise ValueError(f"arm and leader must be < arms = {arms}")
        b = policy.b
        cols = np.full(arms, self.arm_reward)
        cols[self.leader] = self.leader_reward
        null = np.tile(cols, (horizon, 1))
        alt = null.copy()
        if b >= 1:
            tau, observer = self.arm * b, self.arm
            null[tau, self.arm], alt[tau, self.arm] = self.values
            first = b * arms
        else:
            tau, observer = 0, None
            null[0, :], alt[0, :] = self.values
            first = 1
        if first >= horizon:
            raise ValueError(f"horizon {horizon} leaves no sampling round after the change")
        return NeighbourTables(null, alt, tau, observer, tuple(cols.tolist()), self.values, first)


def candidate_designs(arms: int) -> list[TSNeighbour]:
    """The pre-registered family: the tie with each arm j as the changed arm, and the changed
    arm 1 (arm 0 for N = 2... the other arm) 0.05 behind a leader (a near tie).

    >>> [d.describe() for d in candidate_designs(2)]  # doctest: +NORMALIZE_WHITESPACE
    ["arm 0's first reward 1 vs 0, all arms tied", "arm 1's first reward 1 vs 0, all arms tied",
     "arm 1's first reward 1 vs 0, arm 0 leads by 0.05"]
    """
    out = [TSNeighbour(arm=j, leader=(j + 1) % arms) for j in range(arms)]
    out.append(TSNeighbour(arm=1, leader=0, leader_reward=0.55, arm_reward=0.5))
    return out
