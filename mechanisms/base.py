"""Shared base for noise mechanisms: the mechanism protocol, RNG checking, ledger recording.

Every mechanism in :mod:`mechanisms` is a frozen dataclass that

* validates its parameters on construction (``ValueError`` naming the parameter and range);
* samples only from an explicit :class:`numpy.random.Generator` (never the global RNG),
  checked with :func:`check_rng`;
* exposes ``event``: the :class:`~dpaudit.events.PrivacyEvent` of one release, and records
  exactly that event into an optional :class:`~dpaudit.ledger.Ledger` on every release via
  :func:`record_release`;
* states its neighbouring relation and sensitivity norm explicitly (:class:`Norm`).

Example:
    >>> import numpy as np
    >>> from mechanisms.base import check_rng, check_batch, record_release, Norm
    >>> from dpaudit.events import LaplaceEvent
    >>> from dpaudit.ledger import Ledger
    >>> rng = check_rng(np.random.default_rng(0))
    >>> check_batch(None), check_batch(10)
    ((), (10,))
    >>> ledger = Ledger()
    >>> _ = record_release(ledger, LaplaceEvent(scale=2.0), units=[3], label="count")
    >>> ledger.charges()
    {3: 1}
    >>> Norm("l1") is Norm.L1
    True
    >>> check_rng(0)
    Traceback (most recent call last):
    ...
    ValueError: rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), got int
"""

from __future__ import annotations

import abc
from collections.abc import Hashable, Iterable
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.events import Neighbouring, PrivacyEvent
from dpaudit.ledger import Ledger, LedgerEntry
from dpaudit.validation import check_positive

__all__ = [
    "laplace_scale_for",
    "gaussian_sigma_for",
    "Size",
    "Neighbouring",
    "Norm",
    "NoiseMechanism",
    "check_rng",
    "check_batch",
    "check_neighbouring",
    "check_norm",
    "record_release",
]


Size = int | tuple[int, ...] | None
"""Type of the batch argument ``size``: ``None`` (one output), ``n`` or a shape tuple."""


class Norm(str, Enum):
    """The norm in which a mechanism's sensitivity is measured."""

    L1 = "l1"
    L2 = "l2"
    LINF = "linf"


def check_rng(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a :class:`numpy.random.Generator`, else raise ``ValueError``.

    Seeds, ``None``, ``RandomState`` and the ``numpy.random`` module are all rejected: every
    draw must come from an explicit generator the caller owns.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_batch(size: Size) -> tuple[int, ...]:
    """Normalise a batch argument: ``None`` → ``()``, ``n`` → ``(n,)``, tuples kept.

    Every entry must be an integer >= 0.
    """
    if size is None:
        return ()
    if isinstance(size, bool):
        raise _bad_size(size)
    shape = (size,) if isinstance(size, (int, np.integer)) else size
    try:
        out = tuple(shape)
    except TypeError:
        raise _bad_size(size) from None
    for s in out:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise _bad_size(size)
    return tuple(int(s) for s in out)


def _bad_size(size: object) -> ValueError:
    return ValueError(f"size must be None, an integer >= 0 or a tuple of them, got {size!r}")


def laplace_scale_for(sensitivity: float, epsilon: float, releases: int = 1) -> float:
    """The smallest float Laplace scale b with ``releases · sensitivity / b ≤ epsilon`` *exactly*
    (in rational arithmetic), so that basic composition of the releases never exceeds the
    promised ε by a rounding error: ``releases·sensitivity/epsilon`` rounded to nearest can be one
    ulp too small (4/0.7 is, and 4 × (1/fl(4/0.7)) = 0.7 + 2.9e-17).

    >>> b = laplace_scale_for(1.0, 0.7, 4)
    >>> from fractions import Fraction
    >>> 4 / Fraction(b) <= Fraction(0.7), b > 4 / 0.7
    (True, True)
    """
    from fractions import Fraction

    s, e = check_positive("sensitivity", sensitivity), check_positive("epsilon", epsilon)
    k = int(releases)
    b = k * s / e
    while Fraction(k) * Fraction(s) / Fraction(b) > Fraction(e):
        b = float(np.nextafter(b, np.inf))
    return b


def gaussian_sigma_for(sensitivity: float, mu: float, releases: int = 1) -> float:
    """The smallest float σ with ``releases · (sensitivity/σ)² ≤ mu²`` exactly (rational
    arithmetic): k Gaussian releases then compose to at most μ-GDP with no rounding slack.

    >>> s = gaussian_sigma_for(1.0, 0.3, 7)
    >>> from fractions import Fraction
    >>> 7 * (1 / Fraction(s)) ** 2 <= Fraction(0.3) ** 2
    True
    """
    from fractions import Fraction

    s, m = check_positive("sensitivity", sensitivity), check_positive("mu", mu)
    k = int(releases)
    sigma = float(np.sqrt(k)) * s / m
    while Fraction(k) * (Fraction(s) / Fraction(sigma)) ** 2 > Fraction(m) ** 2:
        sigma = float(np.nextafter(sigma, np.inf))
    return sigma


def check_neighbouring(value: Neighbouring | str) -> Neighbouring:
    """Coerce to :class:`~dpaudit.events.Neighbouring` or raise ``ValueError``."""
    try:
        return Neighbouring(value)
    except ValueError:
        valid = ", ".join(repr(n.value) for n in Neighbouring)
        raise ValueError(f"neighbouring must be one of {valid}, got {value!r}") from None


def check_norm(value: Norm | str) -> Norm:
    """Coerce to :class:`Norm` or raise ``ValueError``."""
    try:
        return Norm(value)
    except ValueError:
        valid = ", ".join(repr(n.value) for n in Norm)
        raise ValueError(f"norm must be one of {valid}, got {value!r}") from None


def record_release(
    ledger: Ledger | None,
    event: PrivacyEvent,
    *,
    label: str = "",
    round: int | None = None,
    arm: int | None = None,
    units: Iterable[Hashable] | None = None,
) -> LedgerEntry | None:
    """Record ``event`` in ``ledger`` (if one is given) and return the entry (else ``None``)."""
    if ledger is None:
        return None
    if not isinstance(ledger, Ledger):
        raise ValueError(f"ledger must be a dpaudit.ledger.Ledger or None, got {type(ledger).__name__}")
    return ledger.record(event, label=label, round=round, arm=arm, units=units)


class NoiseMechanism(abc.ABC):
    """Abstract base of every mechanism.

    Subclasses are frozen dataclasses with (at least) the fields ``sensitivity`` (a float in
    the norm ``norm``) and ``neighbouring``, and implement :attr:`event` and :meth:`sample`.
    :meth:`release` is provided: it samples and records :attr:`event` once in the ledger.
    """

    neighbouring: Neighbouring
    norm: Norm

    if TYPE_CHECKING:  # read-only for the type checker: a subclass may derive it (a property)

        @property
        def sensitivity(self) -> float: ...

    @property
    @abc.abstractmethod
    def event(self) -> PrivacyEvent:
        """The privacy event of one release."""

    @abc.abstractmethod
    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Draw outputs for input ``x``; ``size`` adds leading batch dimensions. Records nothing."""

    def release(
        self,
        x: object,
        rng: np.random.Generator,
        ledger: Ledger | None = None,
        *,
        units: Iterable[Hashable] | None = None,
        label: str = "",
        round: int | None = None,
        arm: int | None = None,
    ) -> np.ndarray:
        """One release: sample an output for ``x`` and record :attr:`event` in ``ledger``.

        The event is recorded only after sampling succeeded (a rejected input spends nothing).
        """
        out = self.sample(x, rng)
        record_release(ledger, self.event, label=label, round=round, arm=arm, units=units)
        return out
