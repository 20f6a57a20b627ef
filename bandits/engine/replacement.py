"""Neighbouring reward streams: one unit of privacy changed in every repetition.

The simulator draws one outcome vector of all arms per round (a row of the reward table); a
neighbouring stream changes

* :class:`RewardReplacement` — one reward, the entry (round, arm) — the unit of privacy of
  bandit feedback ("one reward": only the pulled arm's entry of a row is ever observed, so
  changing one entry or the whole row changes at most one observed reward);
* :class:`RoundReplacement` — the whole outcome vector of one round — one round's reward vector
  (full information) or one user's feedback (semi-bandit, cascade).

The policy's randomness is untouched, so a run and its neighbour differ only through the data.

>>> RewardReplacement(round=3, arm=1, value=1.0)
RewardReplacement(round=3, arm=1, value=1.0)
>>> RoundReplacement(round=0, values=(1, 0)).values
(1.0, 0.0)
>>> RewardReplacement(round=-1, arm=0, value=0.0)
Traceback (most recent call last):
...
ValueError: round must be an integer >= 0, got -1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.validation import check_integer, check_probability

__all__ = ["RewardReplacement", "RoundReplacement", "Replacement"]


def _unit_value(name: str, value: object) -> float:
    return check_probability(name, value, low_open=False, high_open=False)


@dataclass(frozen=True)
class RewardReplacement:
    """Replace the reward of ``round`` (0-based) on ``arm`` by ``value`` in every repetition."""

    round: int
    arm: int
    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "round", check_integer("round", self.round, 0))
        object.__setattr__(self, "arm", check_integer("arm", self.arm, 0))
        object.__setattr__(self, "value", _unit_value("value", self.value))

    def check(self, horizon: int, n_arms: int) -> None:
        """Raise ``ValueError`` unless the replaced entry lies inside a (horizon, n_arms) table."""
        if self.round >= horizon:
            raise ValueError(
                f"replace.round must be in [0, {horizon - 1}] (the horizon is {horizon}), "
                f"got {self.round}: the neighbouring run would be identical"
            )
        if self.arm >= n_arms:
            raise ValueError(f"replace.arm must be in [0, {n_arms - 1}], got {self.arm}")

    def apply(self, table: np.ndarray, t0: int) -> None:
        """Apply to a chunk ``table`` (R, C, N) that starts at round ``t0`` (in place)."""
        if t0 <= self.round < t0 + table.shape[1]:
            table[:, self.round - t0, self.arm] = self.value


@dataclass(frozen=True)
class RoundReplacement:
    """Replace the whole outcome vector of ``round`` by ``values`` in every repetition."""

    round: int
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "round", check_integer("round", self.round, 0))
        vals = tuple(_unit_value(f"values[{i}]", v) for i, v in enumerate(np.atleast_1d(self.values)))
        if not vals:
            raise ValueError("values must hold one outcome per arm")
        object.__setattr__(self, "values", vals)

    def check(self, horizon: int, n_arms: int) -> None:
        if self.round >= horizon:
            raise ValueError(
                f"replace.round must be in [0, {horizon - 1}] (the horizon is {horizon}), "
                f"got {self.round}: the neighbouring run would be identical"
            )
        if len(self.values) != n_arms:
            raise ValueError(
                f"replace.values must have {n_arms} entries (one per arm), got {len(self.values)}"
            )

    def apply(self, table: np.ndarray, t0: int) -> None:
        if t0 <= self.round < t0 + table.shape[1]:
            table[:, self.round - t0, :] = self.values


Replacement = RewardReplacement | RoundReplacement
