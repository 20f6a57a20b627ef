"""Certified (ε, δ) for any event under every composition method that applies.

Methods: ``basic``, ``advanced`` (Dwork–Rothblum–Vadhan, heterogeneous), ``rdp`` (continuous
orders, Balle et al. 2020 conversion), ``gdp`` (exact f-DP composition of GDP events) and
``pld`` (dp-accounting, pessimistic). Each is a module that follows
:class:`~dpaudit.accounting.protocol.AccountingMethod`. Every method bounds each per-unit
composition of the event's normal form (:mod:`dpaudit.accounting.composition`) and takes the
worst, because parallel composition is the maximum over data units. A method that cannot bound
an event reports why instead of a number; ``best`` is the minimum over the methods that apply —
each is a valid upper bound, so their minimum is too. :func:`account` never raises for a valid
event and a finite δ ∈ (0, 1) or ε ≥ 0: a numerical failure inside a method (NaN, an overflow it
did not foresee) becomes "not applicable: numerical failure …" for that method, never a number.

Example:
    >>> from dpaudit.accounting import account
    >>> from dpaudit.events import GaussianEvent
    >>> r = account(GaussianEvent.from_mu(0.5).repeat(4), delta=1e-6)
    >>> r.best.method, round(r.best.value, 4), round(r.mu, 6)
    ('gdp', 4.8866, 1.0)
    >>> sorted(r.bounds)
    ['advanced', 'basic', 'gdp', 'pld', 'rdp']
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from dpaudit.accounting import advanced, basic, gdp, pld, progress, rdp
from dpaudit.accounting.composition import (
    Composition,
    NotApplicable,
    TooManyAlternatives,
    check_private,
    normal_form,
)
from dpaudit.accounting.protocol import AccountingMethod, CurveMethod
from dpaudit.accounting.report import METHOD_NOTES, AccountingReport, Bound
from dpaudit.events import NonPrivateEvent, PrivacyEvent
from dpaudit.validation import check_nonnegative, check_probability

__all__ = [
    "Accountant",
    "Bound",
    "AccountingReport",
    "account",
    "epsilon_under",
    "delta_under",
    "METHODS",
    "NotApplicable",
    "Composition",
    "normal_form",
    "epsilon_curves",
    "AccountingMethod",
    "CurveMethod",
    "progress",
    "METHOD_NOTES",
]

from dpaudit.accounting.accountant import Accountant  # noqa: E402 - it uses account() lazily


def _register(*methods: AccountingMethod) -> dict[str, AccountingMethod]:
    out: dict[str, AccountingMethod] = {}
    for m in methods:
        if not isinstance(m, AccountingMethod):
            raise TypeError(f"{m!r} does not follow the AccountingMethod protocol")
        out[m.NAME] = m
    return out


METHODS: dict[str, AccountingMethod] = _register(basic, advanced, rdp, gdp, pld)


def _checked(name: str, value: float) -> float:
    """A method's answer, refusing NaN and infinities (never silently turned into a number)."""
    value = float(value)
    if math.isnan(value):
        raise NotApplicable(f"numerical failure: {name} produced NaN")
    if math.isinf(value):
        raise NotApplicable(f"{name} produced a value beyond the largest double")
    return value


def _worst(method: AccountingMethod, comps: tuple[Composition, ...], fn: str, arg: float) -> float:
    for c in comps:
        check_private(c)
    call = method.epsilon if fn == "epsilon" else method.delta
    worst = -math.inf
    progress.label(method.NAME)
    for c in comps:
        worst = max(worst, _checked(method.NAME, call(c, arg)))
        progress.advance()
    return worst


def epsilon_under(method: str, event: PrivacyEvent, delta: float) -> float:
    """Certified ε at ``delta`` under one method (raises NotApplicable)."""
    delta = check_probability("delta", delta)
    return _worst(_method(method), _normal_form(event), "epsilon", delta)


def delta_under(method: str, event: PrivacyEvent, epsilon: float) -> float:
    """Certified δ at ``epsilon`` under one method (raises NotApplicable)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    return _worst(_method(method), _normal_form(event), "delta", epsilon)


def _normal_form(event: PrivacyEvent) -> tuple[Composition, ...]:
    """:func:`normal_form`, with too many parallel alternatives reported as NotApplicable."""
    try:
        return normal_form(event)
    except TooManyAlternatives as exc:
        raise NotApplicable(str(exc)) from None


def _method(name: str) -> AccountingMethod:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {name!r}") from None


def account(
    event: PrivacyEvent,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    methods: Iterable[str] | None = None,
    extras: dict[str, float] | None = None,
) -> AccountingReport:
    """Bound ``event`` under every method: ε at ``delta`` or δ at ``epsilon`` (exactly one).

    ``extras`` are additional named values (e.g. a paper's published bound) carried into the
    report for comparison; they are never used for ``best``.
    """
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta (to get epsilon) or epsilon (to get delta)")
    if delta is not None:
        delta = check_probability("delta", delta)
        fn, arg, quantity = "epsilon", delta, "epsilon"
    else:
        epsilon = check_nonnegative("epsilon", epsilon)
        fn, arg, quantity = "delta", epsilon, "delta"
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a PrivacyEvent, got {type(event).__name__}")
    names = list(METHODS) if methods is None else [_method(m).NAME for m in methods]
    try:
        comps = normal_form(event)
    except TooManyAlternatives as exc:
        refused = {name: Bound(name, None, str(exc)) for name in names}
        return AccountingReport(quantity, delta, epsilon, None, refused, event.num_releases,
                                dict(extras or {}))
    bounds: dict[str, Bound] = {}
    with progress.task(len(names) * len(comps), "accounting"):
        for name in names:
            t0 = time.perf_counter()
            try:
                value = _worst(METHODS[name], comps, fn, arg)
                said = getattr(METHODS[name], "notes", None)
                note = "; ".join(dict.fromkeys(n for c in comps for n in said(c))) if said else ""
                bounds[name] = Bound(name, value, None, time.perf_counter() - t0, note or None)
            except NotApplicable as exc:
                bounds[name] = Bound(name, None, str(exc), time.perf_counter() - t0)
            except (ArithmeticError, ValueError, MemoryError) as exc:  # a bug, but never a crash
                reason = f"numerical failure in {name}: {type(exc).__name__}: {exc}"
                bounds[name] = Bound(name, None, reason, time.perf_counter() - t0)
    non_private = any(isinstance(leaf, NonPrivateEvent) for c in comps for leaf, _ in c)
    try:
        mu = None if non_private else max(gdp.mu(c) for c in comps)
    except NotApplicable:
        mu = None
    if mu is not None and not math.isfinite(mu):
        mu = None
    return AccountingReport(
        quantity=quantity,
        delta=delta,
        epsilon=epsilon,
        mu=mu,
        bounds=bounds,
        num_releases=event.num_releases,
        extras=dict(extras or {}),
    )


def epsilon_curves(event: PrivacyEvent, deltas: Iterable[float],
                   methods: Iterable[str] | None = None) -> dict[str, list[float | None]]:
    """ε(δ) on a grid of δ for every method (None where a method does not apply)."""
    ds = [check_probability("delta", d) for d in deltas]
    comps = normal_form(event)
    out: dict[str, list[float | None]] = {}
    names = list(METHODS) if methods is None else list(methods)
    with progress.task(len(names) * len(comps) * len(ds), "epsilon curves"):
        for name in names:
            method = _method(name)
            try:
                if isinstance(method, CurveMethod):
                    for c in comps:
                        check_private(c)
                    per = []
                    for c in comps:
                        per.append(method.epsilon_curve(c, ds))
                        progress.advance(len(ds))
                    out[name] = [None if any(x is None for x in v) else _checked(name, max(v))
                                 for v in zip(*per)]
                else:
                    out[name] = [_worst(method, comps, "epsilon", d) for d in ds]
            except NotApplicable:
                out[name] = [None] * len(ds)
    return out
