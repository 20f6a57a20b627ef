"""Validation of user-given parameters: one ``ValueError`` naming the parameter and its valid range.

Every public function and constructor of the toolkit checks its inputs with these, so a bad
value is refused with the same wording wherever it enters (events, mechanisms, accounting,
audits, simulations); the CLI turns the ``ValueError`` into one line and exit status 2.

Example:
    >>> check_probability("delta", 1e-6)
    1e-06
    >>> check_integer("horizon", 0, 2)
    Traceback (most recent call last):
    ...
    ValueError: horizon must be an integer >= 2, got 0
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import SupportsFloat, cast

import numpy as np

__all__ = [
    "plain",
    "check_number",
    "check_positive",
    "check_nonnegative",
    "check_probability",
    "check_integer",
    "check_flag",
    "check_finite_array",
    "check_positive_array",
]


def plain(value: object) -> str:
    """``repr`` of a value with NumPy scalars and arrays shown as plain Python numbers and lists,
    for error messages (``1.5``, not ``np.float64(1.5)``).

    >>> plain(np.float64(1.5)), plain(np.array([1.0, 2.0])), plain("x")
    ('1.5', '[1.0, 2.0]', "'x'")
    """
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    return repr(value)


def check_number(name: str, value: object) -> float:
    """``value`` as a float that is not NaN (±inf allowed), or ``ValueError`` naming ``name``."""
    try:
        v = float(cast(SupportsFloat, value))  # anything float() cannot convert raises, caught here
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {plain(value)}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a number, got NaN")
    return v


def check_positive(name: str, value: object, *, allow_inf: bool = False) -> float:
    """Return ``float(value)`` if it lies in (0, ∞), else raise ``ValueError``."""
    v = check_number(name, value)
    if not (v > 0) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be in (0, inf), got {plain(value)}")
    return v


def check_nonnegative(name: str, value: object) -> float:
    """Return ``float(value)`` if it lies in [0, ∞), else raise ``ValueError``."""
    v = check_number(name, value)
    if not (v >= 0) or math.isinf(v):
        raise ValueError(f"{name} must be in [0, inf), got {plain(value)}")
    return v


def check_probability(name: str, value: object, *, low_open: bool = True, high_open: bool = True) -> float:
    """Return ``float(value)`` if it is a probability in the stated (open/closed) interval."""
    v = check_number(name, value)
    lo_ok = v > 0 if low_open else v >= 0
    hi_ok = v < 1 if high_open else v <= 1
    if not (lo_ok and hi_ok):
        lo = "(0" if low_open else "[0"
        hi = "1)" if high_open else "1]"
        raise ValueError(f"{name} must be in {lo}, {hi}, got {plain(value)}")
    return v


def check_integer(name: str, value: object, minimum: int = 1) -> int:
    """Return ``int(value)`` if it is an integer (not a bool) ≥ ``minimum``, else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {plain(value)}")
    return int(value)


def check_flag(name: str, value: object) -> bool:
    """Return ``bool(value)`` if it is a boolean, else raise ``ValueError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {plain(value)}")
    return bool(value)


def check_finite_array(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    """``values`` as a non-empty 1-D float array of finite numbers, or ``ValueError`` naming ``name``.

    >>> check_finite_array("values", [1, 2.5]).tolist()
    [1.0, 2.5]
    """
    v = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if v.size < 1:
        raise ValueError(f"{name} must contain at least one value")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must all be finite numbers in (-inf, inf), got {values!r}")
    return v


def check_positive_array(name: str, values: Iterable[float] | float, size: int | None = None) -> np.ndarray:
    """``values`` as a non-empty 1-D float array in (0, ∞), or ``ValueError`` naming ``name``; with
    ``size``, one value is repeated ``size`` times and any other length but ``size`` is refused.

    >>> check_positive_array("sigmas", 0.5, 3).tolist()
    [0.5, 0.5, 0.5]
    """
    v = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if size is not None:
        if v.size == 1:
            v = np.full(size, float(v[0]))
        if v.size != size:
            raise ValueError(f"{name} must have 1 or {size} entries, got {v.size}")
    if v.size < 1 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f"{name} must all be in (0, inf), got {values!r}")
    return v
