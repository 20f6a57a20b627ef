"""CascadeUCB1 (Kveton, Szepesvári, Wen & Ashkan 2015), the non-private reference of the cascading
bandits: exact clicks of the examined positions, index ``ŵ + sqrt(1.5 log t / T)``.
"""


from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from bandits.cascading.base import (
    CascadeAgent,
    CascadePolicy,
)
from bandits.policy import Agent, RunContext

__all__ = [
    "CascadeUCB1",
    "UCBAgent",
]


@dataclass(frozen=True)
class CascadeUCB1(CascadePolicy):
    """CascadeUCB1 (Kveton et al. 2015, as Wang et al. 2021 use it): ``ŵ + sqrt(1.5 log t / T)``,
    exact means."""

    label: ClassVar[str] = "cascade-ucb"
    ledger_bytes_per_round = 0  # not private: nothing recorded

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:

        return UCBAgent(run, rows, record=record)


class UCBAgent(CascadeAgent):
    """CascadeUCB1: exact clicks of the examined positions; ``U = ŵ + sqrt(1.5 log t / T)``."""

    private = False
    compiled = "cascade_rounds"

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        self.T.reshape(-1)[flat] += examined
        self.S.reshape(-1)[flat] += clicked
        self.refresh(flat)
