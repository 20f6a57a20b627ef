"""The data units a ledger entry names: compact storage, normalisation, JSON form and grouping.

A release may depend on every unit of data (``None``), on a ``range`` of integer units (a run
of 10⁶ rounds costs one object), on the runs of consecutive values of a 1-D integer NumPy array
(:class:`UnitRuns`: an epoch of one arm's pulls scattered over 10⁶ rounds costs two arrays, not
10⁶ Python ints) or on any other collection of hashable labels (a frozenset):
:func:`normalise_units` turns what a caller gives into one of these. :func:`sweep_integer_units`
and :func:`group_by_unit` group units by the set of entries that cover them, so the cost of
:meth:`dpaudit.ledger.Ledger.groups` grows with the number of entries, not of units.

Example:
    >>> normalise_units(range(3, 7)), normalise_units(np.array([5, 1, 2]))
    (range(3, 7), UnitRuns(3 units in 2 runs: 1..2, 5..5))
    >>> units_from_json(units_to_json(normalise_units(["a", "b"]))) == frozenset({"a", "b"})
    True
    >>> sorted(sweep_integer_units([(0, range(0, 4)), (1, range(2, 6))]).items(), key=repr)
    [(frozenset({0, 1}), (2, 2)), (frozenset({0}), (2, 0)), (frozenset({1}), (2, 4))]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import TypeGuard

import numpy as np

from dpaudit.serialization import decode_value, encode_value

__all__ = [
    "UnitRuns",
    "Units",
    "normalise_units",
    "is_integer_unit",
    "units_to_json",
    "units_from_json",
    "sweep_integer_units",
    "group_by_unit",
]


class UnitRuns:
    """A non-empty set of integer units stored as sorted, disjoint, non-adjacent half-open runs
    ``[starts[i], stops[i])`` (two int64 arrays). Built from any 1-D integer array.

    >>> u = UnitRuns.from_units(np.array([7, 3, 4, 5, 9]))
    >>> u.runs(), len(u), 4 in u, 6 in u, sorted(u)
    ([(3, 6), (7, 8), (9, 10)], 5, True, False, [3, 4, 5, 7, 9])
    """

    __slots__ = ("starts", "stops", "_hash")

    def __init__(self, starts: np.ndarray, stops: np.ndarray) -> None:
        self.starts = np.asarray(starts, dtype=np.int64)
        self.stops = np.asarray(stops, dtype=np.int64)
        self.starts.setflags(write=False)
        self.stops.setflags(write=False)
        self._hash: int | None = None  # computed when first asked (most runs are never hashed)

    @classmethod
    def from_units(cls, units: np.ndarray) -> UnitRuns:
        """The runs of a 1-D integer array (any order; repeats are one unit)."""
        vals = np.asarray(units).reshape(-1).astype(np.int64)
        if vals.size > 1 and not bool(np.all(vals[1:] > vals[:-1])):  # sorted input skips the sort
            vals = np.unique(vals)
        if vals.size == 0:
            raise ValueError("units must be None (all units) or a non-empty collection")
        if int(vals[-1]) - int(vals[0]) == vals.size - 1:  # one run (a sorted, gap-free array)
            return cls(vals[:1], vals[-1:] + 1)
        breaks = np.flatnonzero(np.diff(vals) != 1) + 1
        starts = vals[np.concatenate(([0], breaks))]
        stops = vals[np.concatenate((breaks - 1, [vals.size - 1]))] + 1
        return cls(starts, stops)

    def followed_by(self, *later: UnitRuns) -> UnitRuns:
        """These runs and those of ``later``, given in ascending order (each part's units all after
        those of the part before it), a run that continues across a join merged: what
        :meth:`from_units` gives for all their units, without listing them.

        >>> a, b = UnitRuns.from_units(np.array([0, 1, 4])), UnitRuns.from_units(np.array([5, 9]))
        >>> a.followed_by(b)
        UnitRuns(5 units in 3 runs: 0..1, 4..5, 9..9)
        """
        starts = np.concatenate([self.starts, *(p.starts for p in later)])
        stops = np.concatenate([self.stops, *(p.stops for p in later)])
        apart = starts[1:] != stops[:-1]  # within a part runs never touch: only a join can
        return UnitRuns(starts[np.concatenate(([True], apart))], stops[np.concatenate((apart, [True]))])

    def runs(self) -> list[tuple[int, int]]:
        return list(zip(self.starts.tolist(), self.stops.tolist()))

    def __len__(self) -> int:
        return int((self.stops - self.starts).sum())

    def __contains__(self, unit: object) -> bool:
        if not is_integer_unit(unit):
            return False
        i = int(np.searchsorted(self.starts, int(unit), side="right")) - 1
        return i >= 0 and int(unit) < int(self.stops[i])

    def __iter__(self) -> Iterator[int]:
        for a, b in zip(self.starts.tolist(), self.stops.tolist()):
            yield from range(a, b)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnitRuns)
            and np.array_equal(self.starts, other.starts)
            and np.array_equal(self.stops, other.stops)
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.starts.tobytes(), self.stops.tobytes()))
        return self._hash

    def __repr__(self) -> str:
        runs = self.runs()
        shown = ", ".join(f"{a}..{b - 1}" for a, b in runs[:3]) + (", ..." if len(runs) > 3 else "")
        return f"UnitRuns({len(self)} units in {len(runs)} runs: {shown})"


Units = frozenset | range | UnitRuns | None


def normalise_units(units: Iterable[Hashable] | None) -> Units:
    if units is None:
        return None
    if isinstance(units, UnitRuns):
        return units
    if isinstance(units, np.ndarray) and units.dtype.kind in "iu":
        if units.ndim != 1:
            raise ValueError(f"an array of units must be 1-D, got shape {units.shape}")
        return UnitRuns.from_units(units)
    if isinstance(units, (str, bytes)):
        raise ValueError(
            "units must be None (all units), a range or a collection of unit labels, not a string "
            f"(got {units!r}; write units=[{units!r}] for one unit)"
        )
    if isinstance(units, range):
        if units.step != 1:
            units = frozenset(units)
        elif len(units) == 0:
            raise ValueError("units must be None (all units) or a non-empty collection")
        else:
            return units
    try:
        unit_set = frozenset(units)
    except TypeError:
        raise ValueError(
            f"units must be None, a range or an iterable of hashable labels, got {units!r}"
        ) from None
    if not unit_set:
        raise ValueError("units must be None (all units) or a non-empty collection")
    return unit_set


def is_integer_unit(u: object) -> TypeGuard[int | np.integer]:
    return isinstance(u, (int, np.integer)) and not isinstance(u, bool)



def _hashable(value: object) -> Hashable:
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def units_to_json(units: Units) -> object:
    if units is None:
        return None
    if isinstance(units, range):
        return {"range": [units.start, units.stop]}
    if isinstance(units, UnitRuns):
        return {"runs": [list(r) for r in units.runs()]}
    labels = []
    for u in units:
        if not isinstance(u, (str, int, float, tuple, np.integer, np.floating)) or isinstance(u, bool):
            raise ValueError(f"cannot serialise a unit label of type {type(u).__name__}: {u!r}")
        labels.append(encode_value(u))
    return {"set": sorted(labels, key=repr)}


def units_from_json(data: object) -> Units:
    if data is None:
        return None
    if isinstance(data, dict) and set(data) == {"range"}:
        start, stop = data["range"]
        return range(int(start), int(stop))
    if isinstance(data, dict) and set(data) == {"runs"}:
        runs = data["runs"]
        return UnitRuns(np.array([a for a, _ in runs], np.int64), np.array([b for _, b in runs], np.int64))
    if isinstance(data, dict) and set(data) == {"set"}:
        return frozenset(_hashable(decode_value(v)) for v in data["set"])
    raise ValueError(f"units must be null, {{'range': ...}}, {{'runs': ...}} or {{'set': ...}}, got {data!r}")



def sweep_integer_units(
    named: list[tuple[int, frozenset | range | UnitRuns]],
) -> dict[frozenset, tuple[int, int]]:
    """Group integer units by the set of entries covering them: a sweep over interval ends.

    Every entry contributes half-open intervals (a range is one; a frozenset of integers is
    one interval per run of consecutive values). Between consecutive interval ends the active
    set of entries is constant, so each elementary segment is one candidate group. The ends are
    read window by window of units (:func:`_sorted_windows`), so the sweep holds a few megabytes
    beside the entries whatever their number of runs. Units must lie within int64.
    """
    active: set[int] = set()
    out: dict[frozenset, tuple[int, int]] = {}
    a = 0
    for pos, who, opens in _sorted_windows([(i, *_entry_runs(u)) for i, u in named]):
        fresh = np.empty(pos.size, dtype=bool)  # the first end at its position
        fresh[:1] = True
        np.not_equal(pos[1:], pos[:-1], out=fresh[1:])
        for b, i, opening, first_here in zip(pos.tolist(), who.tolist(), opens.tolist(), fresh.tolist()):
            if first_here:  # the segment [a, b) ends: its set is the one active after a's ends
                if active:
                    key = frozenset(active)
                    count, first = out.get(key, (0, a))
                    out[key] = (count + (b - a), first)
                a = b
            if opening:
                active.add(i)
            else:
                active.discard(i)
    return out


def _entry_runs(units: frozenset | range | UnitRuns) -> tuple[np.ndarray, np.ndarray]:
    """The sorted starts and stops (int64) of the runs of one entry's integer units."""
    if isinstance(units, range):
        return np.array([units.start], np.int64), np.array([units.stop], np.int64)
    if not isinstance(units, UnitRuns):
        units = UnitRuns.from_units(np.fromiter((int(x) for x in units), dtype=np.int64, count=len(units)))
    return units.starts, units.stops


def _sorted_windows(
    runs: list[tuple[int, np.ndarray, np.ndarray]], target: int = 1 << 16
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The interval ends of ``runs`` ((entry, starts, stops), each sorted), window by window of
    consecutive units holding about ``target`` ends: positions (int64) sorted, stops before starts
    at one position, entry indices (int32), and whether each end is a start."""
    cs, ce = [0] * len(runs), [0] * len(runs)  # each entry's next start and next stop
    left = sum(2 * s.size for _, s, _ in runs)
    lo, hi = min(int(s[0]) for _, s, _ in runs), max(int(e[-1]) for _, _, e in runs)
    width, w0 = max(1, (hi - lo + 1) * target // left), lo
    while left:
        last = min(w0 + width - 1, hi)  # the window holds the ends at units w0 .. last
        s_to = [int(np.searchsorted(s, last, "right")) if k < s.size else k for (_, s, _), k in zip(runs, cs)]
        e_to = [int(np.searchsorted(e, last, "right")) if k < e.size else k for (_, _, e), k in zip(runs, ce)]
        n = sum(s_to) - sum(cs) + sum(e_to) - sum(ce)
        if n > 4 * target and width > 1:
            width = max(1, width // 4)
            continue
        if n == 0:  # nothing there: on to the next end
            w0 = min([int(s[k]) for (_, s, _), k in zip(runs, cs) if k < s.size]
                     + [int(e[k]) for (_, _, e), k in zip(runs, ce) if k < e.size])  # fmt: skip
            continue
        stops = [(i, e[k:j]) for (i, _, e), k, j in zip(runs, ce, e_to) if j > k]
        starts = [(i, s[k:j]) for (i, s, _), k, j in zip(runs, cs, s_to) if j > k]
        parts = stops + starts
        pos = np.concatenate([x for _, x in parts])
        who = np.concatenate([np.full(x.size, i, dtype=np.int32) for i, x in parts])
        opens = np.zeros(pos.size, dtype=bool)
        opens[sum(x.size for _, x in stops) :] = True
        order = np.argsort(pos, kind="stable")  # the stops first at one position, as concatenated
        yield pos[order], who[order], opens[order]
        left, cs, ce, w0 = left - n, s_to, e_to, last + 1
        if n < target // 4:
            width *= 2


def group_by_unit(
    named: list[tuple[int, frozenset | range | UnitRuns]],
) -> dict[frozenset, tuple[int, Hashable]]:
    per_unit: dict[Hashable, list[int]] = {}
    for i, u in named:
        for x in u:
            per_unit.setdefault(x, []).append(i)
    out: dict[frozenset, tuple[int, Hashable]] = {}
    for unit, idx in per_unit.items():
        key = frozenset(idx)
        n, first = out.get(key, (0, unit))
        out[key] = (n + 1, first)
    return out

