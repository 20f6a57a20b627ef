"""The contract every accounting method fulfils.

A method is any object (here: a module) with

* ``NAME`` — the key under which :data:`dpaudit.accounting.METHODS` lists it;
* ``epsilon(composition, delta) -> float`` — a certified ε for one sequential composition
  (:class:`~dpaudit.accounting.composition.Composition`) at δ ∈ (0, 1);
* ``delta(composition, epsilon) -> float`` — a certified δ ∈ [0, 1] at ε ≥ 0;
* optionally ``epsilon_curve(composition, deltas) -> list[float | None]`` — ε at many δ at
  once (None where the method does not apply at that δ).

Both functions return a finite double that is never below the true value (the *certified*
direction), exactly 0 for a composition that reveals nothing, and raise
:class:`~dpaudit.accounting.composition.NotApplicable` with the reason when the method cannot
bound the composition (a non-private leaf, an event type it has no bound for, a value outside
the double range, or a parameter outside the method's documented domain). The shared contract
test ``tests/test_accounting_contract.py`` runs against every method in ``METHODS``.

>>> from dpaudit.accounting import METHODS
>>> all(isinstance(m, AccountingMethod) for m in METHODS.values())
True
>>> sorted(n for n, m in METHODS.items() if isinstance(m, CurveMethod))
['pld']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from dpaudit.accounting.composition import Composition

__all__ = ["AccountingMethod", "CurveMethod"]


@runtime_checkable
class AccountingMethod(Protocol):
    """An accounting method: certified ε(δ) and δ(ε) for one sequential composition."""

    NAME: str

    def epsilon(self, composition: Composition, delta: float) -> float:
        """Certified ε at ``delta``; raises NotApplicable(reason)."""
        ...

    def delta(self, composition: Composition, epsilon: float) -> float:
        """Certified δ at ``epsilon``; raises NotApplicable(reason)."""
        ...


@runtime_checkable
class CurveMethod(AccountingMethod, Protocol):
    """A method that can give ε at many δ more cheaply than one call per δ."""

    def epsilon_curve(self, composition: Composition, deltas: Sequence[float]) -> list[float | None]:
        """Certified ε at each of ``deltas`` (None where not applicable at that δ); raises
        NotApplicable(reason) when it applies at none."""
        ...
