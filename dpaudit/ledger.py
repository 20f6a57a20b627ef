"""The privacy ledger: what was released, when, and whose data it touched.

Mechanisms record one :class:`LedgerEntry` per release (or per batch of identical releases)
with labels: the round, the arm, and the data units it touched. ``units=None`` means the
release may depend on every unit of data (e.g. a Thompson-sampling draw that depends on all
past rewards). The ledger turns its entries into one :class:`~dpaudit.events.PrivacyEvent`:
for each data unit, the sequential composition of the releases that touched it; across
units, parallel composition (the worst unit). Units with the same composition are merged.

Example:
    >>> from dpaudit.ledger import Ledger
    >>> from dpaudit.events import LaplaceEvent
    >>> ledger = Ledger()
    >>> _ = ledger.record(LaplaceEvent(scale=1.0), units=range(0, 4), label="epoch 0")
    >>> _ = ledger.record(LaplaceEvent(scale=1.0), units=range(4, 12), label="epoch 1")
    >>> ledger.charges()[5]
    1
    >>> round(ledger.report(delta=1e-6).bounds["basic"].value, 12)  # one ε = 1 release per unit
    1.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpaudit.events import ComposedEvent, NoOpEvent, ParallelEvent, PrivacyEvent

if TYPE_CHECKING:  # pragma: no cover
    from dpaudit.accounting import AccountingReport

__all__ = ["LedgerEntry", "Ledger"]


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release.

    Attributes:
        event: what was released.
        label: free text (e.g. ``"epoch 3 of arm 1"``).
        round: the round (time step) of the release, if any.
        arm: the arm (or candidate) the release concerns, if any.
        units: the data units whose data the release depends on; ``None`` = all of them.
    """

    event: PrivacyEvent
    label: str = ""
    round: int | None = None
    arm: int | None = None
    units: frozenset[Hashable] | None = None


class Ledger:
    """An append-only record of privacy events.

    The ledger is the single source of truth for a run's privacy spend: it never forgets an
    entry, and :meth:`event` / :meth:`report` always reflect every entry recorded so far.
    """

    def __init__(self) -> None:
        self._entries: list[LedgerEntry] = []

    # -- recording -------------------------------------------------------------------------
    def record(
        self,
        event: PrivacyEvent,
        *,
        label: str = "",
        round: int | None = None,
        arm: int | None = None,
        units: Iterable[Hashable] | None = None,
    ) -> LedgerEntry:
        """Append one entry and return it."""
        if not isinstance(event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        unit_set = None if units is None else frozenset(units)
        if unit_set is not None and not unit_set:
            raise ValueError("units must be None (all units) or a non-empty collection")
        entry = LedgerEntry(event=event, label=label, round=round, arm=arm, units=unit_set)
        self._entries.append(entry)
        return entry

    def extend(self, entries: Iterable[LedgerEntry]) -> None:
        for e in entries:
            if not isinstance(e, LedgerEntry):
                raise ValueError(f"entries must be LedgerEntry values, got {type(e).__name__}")
            self._entries.append(e)

    # -- reading ---------------------------------------------------------------------------
    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def units(self) -> frozenset[Hashable]:
        """Every data unit named by some entry."""
        out: set[Hashable] = set()
        for e in self._entries:
            if e.units is not None:
                out.update(e.units)
        return frozenset(out)

    def charges(self) -> dict[Hashable, int]:
        """For every named unit, the number of releases whose output depends on it."""
        global_releases = sum(e.event.num_releases for e in self._entries if e.units is None)
        counts: Counter[Hashable] = Counter()
        for e in self._entries:
            if e.units is not None:
                n = e.event.num_releases
                for u in e.units:
                    counts[u] += n
        return {u: c + global_releases for u, c in counts.items()}

    def event_for(self, unit: Hashable) -> PrivacyEvent:
        """The sequential composition of every release that touched ``unit``."""
        evs = tuple(e.event for e in self._entries if e.units is None or unit in e.units)
        return _compose(evs)

    def event(self) -> PrivacyEvent:
        """One event for the whole ledger: per-unit composition, parallel across units."""
        if all(e.units is None for e in self._entries):
            return _compose(tuple(e.event for e in self._entries))
        global_idx = tuple(i for i, e in enumerate(self._entries) if e.units is None)
        per_unit: dict[Hashable, list[int]] = {}
        for i, e in enumerate(self._entries):
            if e.units is not None:
                for u in e.units:
                    per_unit.setdefault(u, []).append(i)
        groups = {tuple(sorted(set(idx) | set(global_idx))) for idx in per_unit.values()}
        branches = {_compose(tuple(self._entries[i].event for i in g)) for g in groups}
        ordered = sorted(branches, key=repr)
        return ordered[0] if len(ordered) == 1 else ParallelEvent(tuple(ordered))

    def report(self, *, delta: float | None = None, epsilon: float | None = None) -> AccountingReport:
        """Account for the whole ledger under every method (see :func:`dpaudit.accounting.account`)."""
        from dpaudit.accounting import account

        return account(self.event(), delta=delta, epsilon=epsilon)


def _compose(events: tuple[PrivacyEvent, ...]) -> PrivacyEvent:
    events = tuple(e for e in events if not isinstance(e, NoOpEvent))
    if not events:
        return NoOpEvent()
    if len(events) == 1:
        return events[0]
    return ComposedEvent(events)
