"""The answer of :func:`dpaudit.accounting.account`: every method's bound, the best, and the table
that ``print(report)`` and ``dpaudit epsilon`` show (one renderer for both).

Example:
    >>> from dpaudit.accounting import account
    >>> from dpaudit.events import GaussianEvent
    >>> print(account(GaussianEvent.from_mu(0.5).repeat(4), delta=1e-6))  # doctest: +NORMALIZE_WHITESPACE
    GDP mu = 1.000001
    epsilon at delta = 1e-06 (4 releases)
      method                   epsilon  note
      basic                   9.595459  sum of per-step (eps_i, delta_i)
      advanced                9.595459  Dwork-Rothblum-Vadhan, optimised split, at most basic
      rdp                     5.221535  Renyi DP, continuous orders, Balle et al. 2020 conversion
      gdp                     4.886555  exact Gaussian-DP composition
      pld                     4.886555  PLD: exact if Gaussian-only, else certified FFT
      best                    4.886555  certified by gdp

Certified bounds are printed rounded up (:func:`dpaudit.formatting.fmt_up`: the composed μ is
1 + 2⁻⁵² here, the sum rounded up, so it shows as 1.000001); the JSON keeps every digit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from dpaudit.formatting import fmt, fmt_up

__all__ = ["Bound", "AccountingReport", "METHOD_NOTES"]

METHOD_NOTES: dict[str, str] = {
    "basic": "sum of per-step (eps_i, delta_i)",
    "advanced": "Dwork-Rothblum-Vadhan, optimised split, at most basic",
    "rdp": "Renyi DP, continuous orders, Balle et al. 2020 conversion",
    "gdp": "exact Gaussian-DP composition",
    "pld": "PLD: exact if Gaussian-only, else certified FFT",
}
"""One line per accounting method, shown beside its value in the table."""


@dataclass(frozen=True)
class Bound:
    """One method's answer: ``value`` (ε or δ) or, if not applicable, ``reason``."""

    method: str
    value: float | None
    reason: str | None = None
    seconds: float = 0.0
    note: str | None = None  # what the method says about this answer (e.g. a widened grid)

    @property
    def applicable(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class AccountingReport:
    """Every method's bound for one question: ε at ``delta``, or δ at ``epsilon``.

    ``str(report)`` is the table :meth:`table` draws.
    """

    quantity: str  # "epsilon" (given delta) or "delta" (given epsilon)
    delta: float | None
    epsilon: float | None
    mu: float | None
    bounds: dict[str, Bound]
    num_releases: int
    extras: dict[str, float] = field(default_factory=dict)

    @property
    def best(self) -> Bound:
        valid = [b for b in self.bounds.values() if b.applicable]
        if not valid:
            return Bound("none", None, "no method applies to this event")
        # ties by name, except that advanced (capped at basic) never takes a tie from the bound it copies
        return min(valid, key=lambda b: (b.value, b.method == "advanced", b.method))

    def value(self, method: str) -> float | None:
        return self.bounds[method].value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``mu``, the input (``delta`` or ``epsilon``), ``bounds`` (method →
        value or None; extras included), ``best``, and ``reasons`` for inapplicable methods."""
        out: dict[str, Any] = {"mu": self.mu}
        if self.quantity == "epsilon":
            out["delta"] = self.delta
        else:
            out["epsilon"] = self.epsilon
        out["quantity"] = self.quantity
        out["bounds"] = {k: b.value for k, b in self.bounds.items()}
        out["bounds"].update(self.extras)
        best = self.best
        out["best"] = {"method": best.method, "value": best.value}
        out["reasons"] = {k: b.reason for k, b in self.bounds.items() if not b.applicable}
        if any(b.note for b in self.bounds.values()):
            out["notes"] = {k: b.note for k, b in self.bounds.items() if b.note}
        out["num_releases"] = self.num_releases
        return out

    def asdict(self) -> dict[str, Any]:
        return asdict(self)

    def table(self, *, header: str | None = None, notes: Mapping[str, str] | None = None) -> str:
        """The report as a table: a header line (``header``, or the composed GDP μ when there is
        one), the question, one row per method (value and note, or "not applicable: why"), the
        ``extras`` marked "not certified" (with ``notes[name]`` when given), and the best."""
        notes = {**METHOD_NOTES, **(notes or {})}
        if self.quantity == "epsilon":
            given = f"delta = {self.delta:g}"
        else:
            given = f"epsilon = {self.epsilon:g}"
        lines = []
        if header is not None:
            lines.append(header)
        elif self.mu is not None:
            lines.append(f"GDP mu = {fmt_up(self.mu)}")
        lines.append(f"{self.quantity} at {given} ({self.num_releases} releases)")
        lines.append(f"  {'method':<15} {self.quantity:>16}  note")
        for name, b in self.bounds.items():
            note = notes.get(name, "") if b.applicable else f"not applicable: {b.reason}"
            if b.applicable and b.note:
                note = f"{note}; {b.note}"
            lines.append(f"  {name:<15} {fmt_up(b.value):>16}  {note}")
        for name, v in self.extras.items():
            lines.append(f"  {name:<15} {fmt(v):>16}  {notes.get(name, '')} (not certified)".rstrip())
        best = self.best
        lines.append(f"  {'best':<15} {fmt_up(best.value):>16}  certified by {best.method}")
        return "\n".join(line.rstrip() for line in lines)

    def __str__(self) -> str:
        return self.table()
