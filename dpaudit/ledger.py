"""The privacy ledger: what was released, when, and whose data it touched.

Mechanisms record one :class:`LedgerEntry` per release (or per batch of releases that charge
every unit they name once, such as one epoch's noisy sum or a block of local reports) with
labels: the round, the arm, and the data units it touched. ``units=None`` means the release
may depend on every unit of data (e.g. a Thompson-sampling draw that depends on all past
rewards); a ``range``, a 1-D integer NumPy array or any other collection of hashable labels
names some units (stored compactly, see :mod:`dpaudit.data_units`).

The ledger turns its entries into one :class:`~dpaudit.events.PrivacyEvent`: for each data
unit, the sequential composition of the releases that touched it; across units, parallel
composition (the worst unit). Units with the same composition are grouped first
(:meth:`Ledger.groups`, a sweep over the integer ranges,
:func:`~dpaudit.data_units.sweep_integer_units`), so the cost grows with the number of entries,
not with the number of units.

:class:`RunLedgers` holds one ledger per repetition of a vectorised simulation and offers a
vectorised recorder: :meth:`RunLedgers.charge_rounds` marks "these repetitions released this
event about round t's data" for many repetitions at once, and :meth:`RunLedgers.flush` turns the
marks into one range entry per run of consecutive rounds.

A ledger serialises to strict JSON and back (:meth:`Ledger.to_json`, :meth:`Ledger.from_json`;
events through :mod:`dpaudit.serialization`), preserving every entry exactly and so every
accounting number.

Example:
    >>> from dpaudit.ledger import Ledger
    >>> from dpaudit.events import LaplaceEvent
    >>> ledger = Ledger()
    >>> _ = ledger.record(LaplaceEvent(scale=1.0), units=range(0, 4), label="epoch 0")
    >>> _ = ledger.record(LaplaceEvent(scale=1.0), units=range(4, 12), label="epoch 1")
    >>> ledger.charges()[5]
    1
    >>> [(g.num_units, g.first_unit) for g in ledger.groups()]
    [(4, 0), (8, 4)]
    >>> round(ledger.report(delta=1e-6).bounds["basic"].value, 12)  # one ε = 1 release per unit
    1.0
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from dpaudit.data_units import (
    UnitRuns,
    Units,
    group_by_unit,
    is_integer_unit,
    normalise_units,
    sweep_integer_units,
    units_from_json,
    units_to_json,
)
from dpaudit.events import ComposedEvent, NoOpEvent, ParallelEvent, PrivacyEvent
from dpaudit.serialization import event_from_dict, event_to_dict
from dpaudit.validation import check_integer

if TYPE_CHECKING:  # pragma: no cover
    from dpaudit.accounting import AccountingReport
    from dpaudit.transcripts import Transcripts

__all__ = ["LedgerEntry", "Ledger", "UnitGroup", "RunLedgers"]



@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release (or batch of releases charging each named unit once).

    Attributes:
        event: what was released (per unit it touched).
        label: free text (e.g. ``"epoch 3 of arm 1"``).
        round: the round (time step) of the release, if any.
        arm: the arm (or candidate) the release concerns, if any.
        units: the data units whose data the release depends on: ``None`` = all of them, a
            ``range`` of integer units, or a frozenset of unit labels.
    """

    event: PrivacyEvent
    label: str = ""
    round: int | None = None
    arm: int | None = None
    units: Units = None

    def touches(self, unit: Hashable) -> bool:
        """Whether this release depends on ``unit``."""
        return self.units is None or unit in self.units


@dataclass(frozen=True)
class UnitGroup:
    """Units that experienced exactly the same releases: the entry indices (global entries
    included), how many units, and the first of them (in sorted order where sortable)."""

    entries: tuple[int, ...]
    num_units: int
    first_unit: Hashable



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
        """Append one entry and return it. ``units``: None (every unit), a ``range`` or a
        collection of unit labels (a string is refused: it is not a collection of units)."""
        if not isinstance(event, PrivacyEvent):
            raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")
        entry = LedgerEntry(event=event, label=label, round=round, arm=arm, units=normalise_units(units))
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
        return _compose(tuple(e.event for e in self._entries if e.touches(unit)))

    def groups(self) -> list[UnitGroup]:
        """The distinct per-unit sets of entries, with how many units share each.

        Global entries (``units=None``) belong to every group; if no entry names units, one
        group with ``num_units = 0`` and ``first_unit = None`` stands for "every unit".
        """
        glob = tuple(i for i, e in enumerate(self._entries) if e.units is None)
        named = [(i, e.units) for i, e in enumerate(self._entries) if e.units is not None]
        if not named:
            return [UnitGroup(glob, 0, None)]
        per_key: Mapping[frozenset, tuple[int, Hashable]]
        if all(isinstance(u, (range, UnitRuns)) or all(is_integer_unit(x) for x in u) for _, u in named):
            per_key = sweep_integer_units(named)
        else:
            per_key = group_by_unit(named)
        return [UnitGroup(tuple(sorted(set(k) | set(glob))), n, first) for k, (n, first) in per_key.items()]

    def group_event(self, group: UnitGroup) -> PrivacyEvent:
        """The sequential composition of the releases of one :class:`UnitGroup`."""
        return _compose(tuple(self._entries[i].event for i in group.entries))

    def event(self) -> PrivacyEvent:
        """One event for the whole ledger: per-unit composition, parallel across units."""
        branches = {self.group_event(g) for g in self.groups()}
        ordered = sorted(branches, key=repr)
        return ordered[0] if len(ordered) == 1 else ParallelEvent(tuple(ordered))

    # -- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-ready dict of every entry (events via :mod:`dpaudit.serialization`; units as
        ``null``, ``{"range": [start, stop]}``, ``{"runs": [[start, stop], ...]}`` or
        ``{"set": [labels]}``; a label that is a tuple is written as a list)."""
        return {"format": LEDGER_FORMAT, "version": LEDGER_VERSION,
                "entries": [_entry_to_dict(e) for e in self._entries]}

    @classmethod
    def from_dict(cls, data: dict) -> Ledger:
        """The ledger written by :meth:`to_dict` (every event rebuilt and validated)."""
        if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
            raise ValueError(f"data must be a dict with format {LEDGER_FORMAT!r}")
        if data.get("version") != LEDGER_VERSION:
            raise ValueError(f"version must be {LEDGER_VERSION}, got {data.get('version')!r}")
        ledger = cls()
        for item in data.get("entries", []):
            ledger._entries.append(_entry_from_dict(item))
        return ledger

    def to_json(self, **kwargs: Any) -> str:
        """The ledger as strict JSON (``allow_nan=False``: non-finite floats are written as
        ``{"float": "inf"}``); keyword arguments go to :func:`json.dumps` (e.g. ``indent=2``).

        >>> from dpaudit.events import GaussianEvent
        >>> led = Ledger()
        >>> _ = led.record(GaussianEvent(sigma=0.1), units=range(3), label="round 0")
        >>> Ledger.from_json(led.to_json()).entries == led.entries
        True
        """
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """The ledger written by :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def report(self, *, delta: float | None = None, epsilon: float | None = None) -> AccountingReport:
        """Account for the whole ledger under every method (see :func:`dpaudit.accounting.account`)."""
        from dpaudit.accounting import account

        return account(self.event(), delta=delta, epsilon=epsilon)


LEDGER_FORMAT = "dpaudit-ledger"
LEDGER_VERSION = 1



def _entry_to_dict(e: LedgerEntry) -> dict:
    return {"event": event_to_dict(e.event), "label": e.label,
            "round": None if e.round is None else int(e.round),
            "arm": None if e.arm is None else int(e.arm), "units": units_to_json(e.units)}


def _entry_from_dict(d: dict) -> LedgerEntry:
    if not isinstance(d, dict) or "event" not in d:
        raise ValueError(f"an entry must be a dict with an 'event', got {d!r}")
    return LedgerEntry(event=event_from_dict(d["event"]), label=d.get("label", ""), round=d.get("round"),
                       arm=d.get("arm"), units=units_from_json(d.get("units")))



def _compose(events: tuple[PrivacyEvent, ...]) -> PrivacyEvent:
    events = tuple(e for e in events if not isinstance(e, NoOpEvent))
    if not events:
        return NoOpEvent()
    if len(events) == 1:
        return events[0]
    return ComposedEvent(events)


class RunLedgers:
    """One :class:`Ledger` per repetition of a vectorised run, with a vectorised recorder.

    Mechanisms inside a vectorised agent release for many repetitions at once. Recording one
    entry per repetition and round would cost more than the simulation, so per-round releases
    are *marked* (:meth:`charge_rounds`) and coalesced by :meth:`flush` into one range entry per
    (repetition, event, run of consecutive rounds). Rare releases (an epoch's noisy sum) go
    straight to :meth:`record`.

    >>> from dpaudit.events import LaplaceEvent
    >>> import numpy as np
    >>> led = RunLedgers(2)
    >>> ev = LaplaceEvent(scale=1.0)
    >>> for t in range(5):
    ...     led.charge_rounds(ev, np.array([0, 1]) if t != 2 else np.array([0]), t, label="report")
    >>> led.flush()
    >>> [e.units for e in led[0].entries], [e.units for e in led[1].entries]
    ([range(0, 5)], [range(0, 2), range(3, 5)])
    """

    def __init__(self, repetitions: int, recording: bool = True) -> None:
        self.repetitions = check_integer("repetitions", repetitions)
        self.recording = bool(recording)
        """False for runs whose releases nobody reads (an audit's trajectories: the releases of a
        run are checked by ``dpaudit run``'s own ledger check): every recording call is then a
        no-op, there are no ledgers to iterate, and a policy that builds its entries itself checks
        this flag first (the audit of an epoch-based policy spent ~90 % of its time on them)."""
        self._ledgers = tuple(Ledger() for _ in range(self.repetitions)) if self.recording else ()
        # (event, label) -> (start, stop) arrays over repetitions: the run of consecutive
        # marked rounds being built, [start, stop); stop = -1 where none is open
        self._open: dict[tuple[PrivacyEvent, str], tuple[np.ndarray, np.ndarray]] = {}
        self.transcripts: Transcripts | None = None
        """What the mechanisms released (set by an audit that keeps transcripts; None otherwise)."""

    def released(self, rows: Sequence[int] | np.ndarray, key: str | Sequence[str], values: Any) -> None:
        """Keep what repetitions ``rows`` released under ``key`` when transcripts are kept (an
        audit: :meth:`dpaudit.transcripts.Transcripts.add`); nothing otherwise."""
        if self.transcripts is not None:
            self.transcripts.add(rows, key, values)

    def __len__(self) -> int:
        return self.repetitions

    def __getitem__(self, rep: int) -> Ledger:
        if not self.recording:
            raise RuntimeError("this run keeps no ledgers (recording=False): check "
                               "RunLedgers.recording before building an entry")
        return self._ledgers[rep]

    def __iter__(self) -> Iterator[Ledger]:
        return iter(self._ledgers)

    @overload
    def record(
        self,
        rows: Sequence[int] | np.ndarray,
        event: PrivacyEvent,
        *,
        units: Iterable[Hashable] | None = ...,
        per_row_units: Literal[False] = ...,
        label: str = ...,
        round: int | None = ...,
        arm: int | None = ...,
    ) -> None: ...

    @overload
    def record(
        self,
        rows: Sequence[int] | np.ndarray,
        event: PrivacyEvent,
        *,
        units: Sequence[Iterable[Hashable] | None],
        per_row_units: Literal[True],
        label: str = ...,
        round: int | None = ...,
        arm: int | None = ...,
    ) -> None: ...

    def record(
        self,
        rows: Sequence[int] | np.ndarray,
        event: PrivacyEvent,
        *,
        units: Any = None,
        per_row_units: bool = False,
        label: str = "",
        round: int | None = None,
        arm: int | None = None,
    ) -> None:
        """Record ``event`` in the ledger of every repetition in ``rows``; ``units`` is shared,
        or (``per_row_units=True``) one collection per row (the two overloads above say which)."""
        if not self.recording:
            return
        rows_l = [int(r) for r in np.asarray(rows).reshape(-1)]
        if not per_row_units and rows_l:  # one immutable entry, shared by every listed ledger
            entry = self._ledgers[rows_l[0]].record(event, label=label, round=round, arm=arm, units=units)
            for r in rows_l[1:]:
                self._ledgers[r]._entries.append(entry)
            return
        for k, r in enumerate(rows_l):
            u = units[k] if per_row_units else units
            self._ledgers[r].record(event, label=label, round=round, arm=arm, units=u)

    def charge_rounds(self, event: PrivacyEvent, rows: np.ndarray, round: int, *, label: str = "") -> None:
        """Mark that repetitions ``rows`` released ``event`` about the data of round ``round``
        (integer unit ``round``). Consecutive rounds coalesce into one range entry; the work
        is vectorised over ``rows`` except where a run breaks."""
        if not self.recording:
            return
        key = (event, label)
        if key not in self._open:
            self._open[key] = (np.zeros(self.repetitions, np.int64), np.full(self.repetitions, -1, np.int64))
        start, stop = self._open[key]
        t = int(round)
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        cont = stop[rows] == t
        fresh = rows[~cont]
        for r in fresh[stop[fresh] >= 0].tolist():  # a run broke: write it
            self._ledgers[r].record(event, label=label, units=range(int(start[r]), int(stop[r])))
        start[fresh] = t
        stop[rows] = t + 1

    def flush(self) -> None:
        """Write every open run of marked rounds as a range entry."""
        for (event, label), (start, stop) in self._open.items():
            for r in np.flatnonzero(stop >= 0).tolist():
                self._ledgers[r].record(event, label=label, units=range(int(start[r]), int(stop[r])))
        self._open.clear()
