"""An incremental accountant: compose events as they happen, ask for ε or δ at any time.

:class:`Accountant` keeps the history as a multiset — each distinct event with its count — so
composing the same event again (one DP-SGD step after another) is a counter increment, not a new
entry, and a query costs what the *distinct* events cost, whatever the number of steps: gdp and
rdp are closed forms in the counts, and the subsampled-Gaussian RDP curve is cached per (q, σ);
pld composes each distinct step once by FFT (its grid, not the history, sets the cost). An answer
is kept until the next :meth:`~Accountant.compose`, so repeated queries are free.

Every answer is :func:`~dpaudit.accounting.account`'s ``best`` over the chosen methods (default:
all), certified like every other number in the toolkit; :attr:`~Accountant.method` says which
method gave the last one and :meth:`~Accountant.report` the whole table. The accountant
serialises to JSON-ready dicts (:meth:`~Accountant.to_dict`, :meth:`~Accountant.from_dict`).

Example (DP-SGD, one step at a time):
    >>> from dpaudit.accounting.calibration import dpsgd_event
    >>> acc = Accountant(methods=["rdp", "pld"])
    >>> step = dpsgd_event(0.01, 1.0, 1)
    >>> for _ in range(1000):
    ...     _ = acc.compose(step)
    >>> round(acc.get_epsilon(1e-5), 4), acc.method, acc.num_releases
    (1.8282, 'pld', 1000)
    >>> Accountant.from_dict(acc.to_dict()).get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dpaudit.accounting.composition import NotApplicable
from dpaudit.accounting.report import AccountingReport
from dpaudit.events import ComposedEvent, NoOpEvent, PrivacyEvent, SelfComposedEvent
from dpaudit.validation import check_integer, check_nonnegative, check_probability

__all__ = ["Accountant"]


class Accountant:
    """Incremental accounting of a growing history of events (see the module docstring)."""

    def __init__(self, methods: Iterable[str] | None = None) -> None:
        from dpaudit.accounting import METHODS

        self.methods = list(METHODS) if methods is None else [str(m) for m in methods]
        for m in self.methods:
            if m not in METHODS:
                raise ValueError(f"methods must be among {sorted(METHODS)}, got {m!r}")
        self._counts: dict[PrivacyEvent, int] = {}
        self._last: PrivacyEvent | None = None  # the last event composed, counted in _last_count
        self._last_count = 0
        self._answers: dict[tuple[str, float], AccountingReport] = {}
        self._method: str | None = None

    # -- composing --------------------------------------------------------------------

    def compose(self, event: PrivacyEvent, count: int = 1) -> Accountant:
        """Record ``count`` more releases of ``event`` (k-fold events are unfolded into counts);
        returns the accountant, so calls chain."""
        if type(event) is SelfComposedEvent:
            return self.compose(event.event, check_integer("count", count, 0) * event.count)
        if event is not self._last and not (type(event) is type(self._last) and event == self._last):
            # (the same event again — the same object, or an equal one — costs an integer addition)
            if not isinstance(event, PrivacyEvent):
                raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")
            count = check_integer("count", count, 0)
            self._flush()
            self._last = event
        elif not (type(count) is int and count >= 0):
            count = check_integer("count", count, 0)
        self._last_count += count
        if count:
            self._answers.clear()
        return self

    def _flush(self) -> None:
        if self._last is not None and self._last_count:
            self._counts[self._last] = self._counts.get(self._last, 0) + self._last_count
        self._last, self._last_count = None, 0

    @property
    def history(self) -> dict[PrivacyEvent, int]:
        """Each distinct event composed so far, with its count (in order of first composition)."""
        self._flush()
        return dict(self._counts)

    @property
    def num_releases(self) -> int:
        return sum(e.num_releases * c for e, c in self.history.items())

    def event(self) -> PrivacyEvent:
        """The whole history as one event (a composition of k-fold events)."""
        parts = tuple(e.repeat(c) if c > 1 else e for e, c in self.history.items() if c > 0)
        return ComposedEvent(parts) if parts else NoOpEvent()

    # -- querying ---------------------------------------------------------------------

    def report(self, *, delta: float | None = None, epsilon: float | None = None) -> AccountingReport:
        """Every chosen method's bound for the history: ε at ``delta`` or δ at ``epsilon``."""
        from dpaudit.accounting import account

        if delta is not None:
            key = ("delta", check_probability("delta", delta))
        elif epsilon is not None:
            key = ("epsilon", check_nonnegative("epsilon", epsilon))
        else:
            raise ValueError("give exactly one of delta (to get epsilon) or epsilon (to get delta)")
        if key not in self._answers:
            self._answers[key] = account(self.event(), delta=delta, epsilon=epsilon, methods=self.methods)
        return self._answers[key]

    def _best(self, report: AccountingReport) -> float:
        best = report.best
        if best.value is None:
            reasons = "; ".join(f"{k}: {b.reason}" for k, b in report.bounds.items())
            raise NotApplicable(f"no method bounds this history ({reasons})")
        self._method = best.method
        return best.value

    def get_epsilon(self, delta: float) -> float:
        """The certified ε at ``delta`` (the best method's; :attr:`method` names it)."""
        return self._best(self.report(delta=delta))

    def get_delta(self, epsilon: float) -> float:
        """The certified δ at ``epsilon``."""
        return self._best(self.report(epsilon=epsilon))

    @property
    def method(self) -> str | None:
        """The method that certified the last answer (None before the first query)."""
        return self._method

    # -- serialisation ----------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``{"methods": [...], "history": [{"event": ..., "count": n}, ...]}`` (JSON-ready)."""
        from dpaudit.serialization import event_to_dict

        return {"methods": list(self.methods),
                "history": [{"event": event_to_dict(e), "count": c} for e, c in self.history.items()]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Accountant:
        """The accountant written by :meth:`to_dict`."""
        from dpaudit.serialization import event_from_dict

        if not isinstance(data, dict) or "history" not in data:
            raise ValueError("an accountant must be a dict with 'methods' and 'history'")
        acc = cls(data.get("methods"))
        for entry in data["history"]:
            acc.compose(event_from_dict(entry["event"]), entry["count"])
        return acc

    def __repr__(self) -> str:
        return f"Accountant({len(self.history)} distinct events, {self.num_releases} releases)"
