"""Local reports of many rows at once, each row with its own additive-noise mechanism.

A vectorised run holds R rows — repetitions, and in a stacked experiment several configurations
× repetitions (the ε grids of Wang et al. (2021), Figure 1). Each row's user sends ``slots``
reports per round through the row's :class:`~mechanisms.additive.AdditiveNoiseMechanism`; which
slots are sent may depend on the round (Wang et al. (2021), Algorithms 2–3, send one value per
*examined* position). :meth:`RowReports.release` adds ``scale_row × standard draw`` exactly as
:meth:`~mechanisms.additive.AdditiveNoiseMechanism.release_batch` does, and remembers which
(row, round, slot) released; :meth:`RowReports.flush` writes them to the rows' ledgers — per row
and slot one entry of the row's mechanism event whose units are the rounds it was sent in (rows
with identical units and event share one entry).

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import RunLedgers
    >>> from mechanisms.laplace import LaplaceMechanism
    >>> led = RunLedgers(2)
    >>> rep = RowReports([LaplaceMechanism(2.0), LaplaceMechanism(4.0)], slots=2, ledgers=led)
    >>> y = rep.release(np.zeros((2, 2)), np.ones((2, 2)), np.array([[True, False], [True, True]]), 0)
    >>> y.tolist()
    [[2.0, 2.0], [4.0, 4.0]]
    >>> _ = rep.release(np.zeros((2, 2)), np.ones((2, 2)), np.array([[True, True], [True, False]]), 1)
    >>> rep.flush(); [sorted(led[r].charges().items()) for r in range(2)]
    [[(0, 1), (1, 2)], [(0, 2), (1, 1)]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpaudit.data_units import UnitRuns
from dpaudit.events import PrivacyEvent
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer
from mechanisms.additive import AdditiveNoiseMechanism

__all__ = ["RowReports"]


class RowReports:
    """Per-row additive-noise reports (module docstring).

    Args:
        mechanisms: one mechanism per row (same ``standard_noise``); a slot is one release of it.
        slots: reports per round and row.
        ledgers: one ledger per row (or None: nothing is recorded).
        label: ledger label.
    """

    def __init__(
        self,
        mechanisms: Sequence[AdditiveNoiseMechanism],
        slots: int,
        ledgers: RunLedgers | None,
        label: str = "report",
    ) -> None:
        mechs = list(mechanisms)
        if not mechs or not all(isinstance(m, AdditiveNoiseMechanism) for m in mechs):
            raise ValueError("mechanisms must be a non-empty sequence of AdditiveNoiseMechanism")
        kinds = {m.standard_noise for m in mechs}
        if len(kinds) != 1:
            raise ValueError(f"every row's mechanism must use the same standard noise, got {sorted(kinds)}")
        self.standard_noise = kinds.pop()
        self.slots = check_integer("slots", slots)
        if ledgers is not None and len(ledgers) != len(mechs):
            raise ValueError(f"ledgers must hold {len(mechs)} ledgers, got {len(ledgers)}")
        self.mechanisms, self.ledgers, self.label = mechs, ledgers, label
        self.scale = np.array([getattr(m, m.noise_parameter) for m in mechs], dtype=float)
        self._rounds: list[int] = []
        self._masks: list[np.ndarray] = []

    @property
    def rows(self) -> int:
        return len(self.mechanisms)

    def release(self, x: np.ndarray, standard: np.ndarray, sent: np.ndarray | None, round: int) -> np.ndarray:
        """``x + scale_row · standard`` for every row (``x``, ``standard``: (R, W)); ``sent``
        (R, slots) marks the slots each row's user really sends this round (None: all). Values
        of unsent slots are returned but must not be used."""
        x = np.asarray(x, dtype=float)
        z = np.asarray(standard, dtype=float)
        if x.shape != z.shape or x.shape[:1] != (self.rows,):
            raise ValueError(f"x and standard must have the same shape ({self.rows}, ...)")
        if not np.all(np.isfinite(x)):
            raise ValueError("x must be finite")
        out = x + self.scale.reshape((-1,) + (1,) * (x.ndim - 1)) * z
        if self.ledgers is not None:
            kept = out if sent is None else np.where(np.asarray(sent, dtype=bool), out, np.nan)
            self.ledgers.released(np.arange(self.rows), f"{self.label} round {round}", kept)
        if self.ledgers is not None:
            mask = (
                np.ones((self.rows, self.slots), dtype=bool) if sent is None else np.asarray(sent, dtype=bool)
            )
            if mask.shape != (self.rows, self.slots):
                raise ValueError(f"sent must have shape ({self.rows}, {self.slots})")
            self._rounds.append(int(round))
            self._masks.append(mask.copy())
        return out

    def flush(self) -> None:
        """Write the releases remembered since the last flush to the ledgers."""
        if self.ledgers is None or not self._rounds:
            return
        rounds = np.asarray(self._rounds, dtype=np.int64)
        masks = np.stack(self._masks, axis=1)  # (R, n, slots)
        self._rounds, self._masks = [], []
        order = np.argsort(rounds, kind="stable")
        rounds, masks = rounds[order], masks[:, order]
        for s in range(self.slots):
            full = masks[:, :, s].all(axis=1)
            shared: dict[PrivacyEvent, list[int]] = {}
            for r in np.flatnonzero(full).tolist():
                shared.setdefault(self.mechanisms[r].event, []).append(r)
            if shared:
                units = UnitRuns.from_units(rounds)
                for event, rows in shared.items():
                    self.ledgers.record(rows, event, units=units, label=f"{self.label} slot {s}")
            for r in np.flatnonzero(~full).tolist():
                sel = rounds[masks[r, :, s]]
                if sel.size:
                    self.ledgers.record(
                        [r],
                        self.mechanisms[r].event,
                        units=UnitRuns.from_units(sel),
                        label=f"{self.label} slot {s}",
                    )
