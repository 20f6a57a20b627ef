"""Scalar test statistics of mechanism outputs for black-box and white-box audits.

An audit runs a mechanism many times on neighbouring inputs x (the *null*) and x′ (the
*alternative*), maps every output to one real number with a statistic ``s``, and then
thresholds ``s`` (see :mod:`dpaudit.audit.thresholds`). A statistic is any callable that maps
an array of ``n`` outputs to a float64 array of shape ``(n,)``; the classes here are small
frozen dataclasses, so they are hashable, comparable and can describe themselves in a
report (:meth:`describe`).

* :class:`Identity` — scalar outputs (shape ``(n,)`` or ``(n, 1)``).
* :class:`Projection` — vector outputs (shape ``(n, d)``), ``s(o) = ⟨w, o⟩``.
* :class:`Indicator` — discrete outputs, ``s(o) = 1[o ∈ event]``; ``axis=-1`` rows of a
  2-D array are compared whole (e.g. an action sequence).
* :class:`PrivacyLoss` — white-box likelihood-ratio statistic
  ``L(o) = log p(o | x) / p(o | x′)`` for mechanisms that expose a vectorised
  ``privacy_loss(outputs)`` method. Thresholding ``L`` is the Neyman–Pearson optimal
  distinguisher, and its samples under x also feed
  :func:`dpaudit.audit.profile.monte_carlo_profile`.

Everything is vectorised: 10^6 outputs take milliseconds.

Example:
    >>> import numpy as np
    >>> from dpaudit.audit.statistics import Identity, Projection, Indicator
    >>> Identity()(np.array([0.5, -1.0]))
    array([ 0.5, -1. ])
    >>> Projection((1.0, -1.0))(np.array([[2.0, 1.0], [0.0, 3.0]]))
    array([ 1., -3.])
    >>> Indicator((2, 3))(np.array([1, 2, 3, 4]))
    array([0., 1., 1., 0.])

A direction chosen from the data (e.g. the difference of the sample means) must be chosen
on samples that are *not* used to certify the bound; see :meth:`Projection.from_means`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "as_samples",
    "Statistic",
    "HasPrivacyLoss",
    "Identity",
    "Projection",
    "Indicator",
    "PrivacyLoss",
    "default_statistic",
]


@runtime_checkable
class Statistic(Protocol):
    """A map from ``n`` outputs to a float64 array of shape ``(n,)``."""

    def __call__(self, outputs: Any) -> np.ndarray: ...


@runtime_checkable
class HasPrivacyLoss(Protocol):
    """A mechanism (for a fixed neighbouring pair x, x′) that can evaluate its privacy loss.

    ``privacy_loss(outputs)`` must return ``log p(o | x) − log p(o | x′)`` for every output
    ``o`` (vectorised, shape ``(n,)``), with ``+inf`` where ``p(o | x′) = 0 < p(o | x)``.
    """

    def privacy_loss(self, outputs: Any) -> np.ndarray: ...


def as_samples(name: str, values: Any, *, allow_inf: bool = True, allow_empty: bool = False) -> np.ndarray:
    """``values`` as a float64 vector of scalar statistics, validated.

    Shape ``(n,)`` or ``(n, 1)`` (squeezed); never NaN; ``±inf`` only if ``allow_inf``; at
    least one value unless ``allow_empty``. The one validator of statistic samples used by the
    statistics, the threshold families and the Monte-Carlo profile.

    >>> as_samples("x", [[1.0], [2.0]])
    array([1., 2.])
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or (arr.size == 0 and not allow_empty):
        size = "a" if allow_empty else "a non-empty"
        raise ValueError(f"{name} must be {size} 1-D array of scalar statistics (shape (n,) or (n, 1)), "
                         f"got shape {arr.shape}")
    bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must not contain NaN{'' if allow_inf else ' or inf'}")
    return arr


@dataclass(frozen=True)
class Identity:
    """The output itself, for scalar outputs (shape ``(n,)`` or ``(n, 1)``).

    >>> Identity()([1, 2, 3]).dtype
    dtype('float64')
    """

    def __call__(self, outputs: Any) -> np.ndarray:
        return as_samples("outputs", outputs, allow_empty=True)

    def describe(self) -> str:
        return "identity"


@dataclass(frozen=True)
class Projection:
    """``s(o) = ⟨direction, o⟩`` for vector outputs of shape ``(n, d)``.

    >>> import numpy as np
    >>> Projection((0.0, 2.0))(np.ones((3, 2)))
    array([2., 2., 2.])
    """

    direction: tuple[float, ...]

    def __post_init__(self) -> None:
        w = np.atleast_1d(np.asarray(self.direction, dtype=np.float64))
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"direction must be a non-empty 1-D vector, got shape {w.shape}")
        if not np.all(np.isfinite(w)) or not np.any(w != 0):
            raise ValueError("direction must be finite and not all zero")
        object.__setattr__(self, "direction", tuple(float(v) for v in w))

    @classmethod
    def from_means(cls, null_outputs: Any, alt_outputs: Any) -> Projection:
        """Project onto the difference of the sample means (alternative minus null).

        Use *selection* samples only: a direction fitted on the samples that certify the bound
        invalidates the confidence statement.

        >>> import numpy as np
        >>> Projection.from_means(np.zeros((4, 2)), np.array([[1.0, 0.0]] * 4)).direction
        (1.0, 0.0)
        """
        a = np.asarray(null_outputs, dtype=np.float64)
        b = np.asarray(alt_outputs, dtype=np.float64)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
            raise ValueError(f"outputs must be (n, d) arrays of equal d, got {a.shape} and {b.shape}")
        return cls(tuple((b.mean(axis=0) - a.mean(axis=0)).tolist()))

    def __call__(self, outputs: Any) -> np.ndarray:
        o = np.asarray(outputs, dtype=np.float64)
        w = np.asarray(self.direction)
        if o.ndim == 1 and w.size == 1:
            o = o[:, None]
        if o.ndim != 2 or o.shape[1] != w.size:
            raise ValueError(f"outputs must have shape (n, {w.size}), got {o.shape}")
        return o @ w

    def describe(self) -> str:
        return f"projection onto {list(self.direction)}"


@dataclass(frozen=True)
class Indicator:
    """``s(o) = 1`` if the output lies in ``event`` (a tuple of values), else ``0``.

    With ``rowwise=True`` the outputs are an ``(n, k)`` array and each row is compared
    as a whole against the event's rows (e.g. action sequences).

    >>> import numpy as np
    >>> Indicator(((0, 1),), rowwise=True)(np.array([[0, 1], [1, 0]]))
    array([1., 0.])
    """

    event: tuple[Any, ...]
    rowwise: bool = False

    def __post_init__(self) -> None:
        ev = tuple(tuple(e) if self.rowwise else e for e in self.event)
        if not ev:
            raise ValueError("event must contain at least one value")
        object.__setattr__(self, "event", ev)

    def __call__(self, outputs: Any) -> np.ndarray:
        o = np.asarray(outputs)
        if not self.rowwise:
            if o.ndim != 1:
                raise ValueError(f"outputs must have shape (n,), got {o.shape}")
            return np.isin(o, np.asarray(self.event)).astype(np.float64)
        if o.ndim != 2:
            raise ValueError(f"outputs must have shape (n, k) with rowwise=True, got {o.shape}")
        ev = np.asarray(self.event)
        if ev.ndim != 2 or ev.shape[1] != o.shape[1]:
            raise ValueError(f"event rows must have length {o.shape[1]}")
        hit = np.zeros(o.shape[0], dtype=bool)
        for row in ev:
            hit |= np.all(o == row, axis=1)
        return hit.astype(np.float64)

    def describe(self) -> str:
        return f"indicator of {list(self.event)}"


@dataclass(frozen=True)
class PrivacyLoss:
    """White-box statistic ``L(o) = log p(o | x) − log p(o | x′)`` from ``mechanism.privacy_loss``.

    Large ``L`` is evidence for x (the null), so the Neyman–Pearson test says "x′" when
    ``L`` is *small*; the threshold families of :mod:`dpaudit.audit.thresholds` try both orientations.

    >>> import numpy as np
    >>> class Shift:  # N(0, 1) under x vs N(1, 1) under x'
    ...     def privacy_loss(self, o):
    ...         return 0.5 - np.asarray(o, dtype=float)
    >>> PrivacyLoss(Shift())(np.array([0.0, 1.0]))
    array([ 0.5, -0.5])
    """

    mechanism: Any

    def __post_init__(self) -> None:
        if not callable(getattr(self.mechanism, "privacy_loss", None)):
            raise ValueError("mechanism must expose a callable privacy_loss(outputs)")

    def __call__(self, outputs: Any) -> np.ndarray:
        loss = np.asarray(self.mechanism.privacy_loss(outputs), dtype=np.float64)
        if loss.ndim != 1:
            raise ValueError(f"privacy_loss must return shape (n,), got {loss.shape}")
        if np.isnan(loss).any():
            raise ValueError("privacy_loss returned NaN")
        return loss

    def describe(self) -> str:
        return f"privacy loss of {type(self.mechanism).__name__}"


def default_statistic(outputs: Any, mechanism: Any = None) -> Statistic:
    """Pick a statistic: the privacy loss when ``mechanism`` exposes one, else the identity
    for scalar (real) outputs and an indicator of the first observed value for other 1-D
    outputs. Vector outputs need an explicit :class:`Projection`.

    >>> import numpy as np
    >>> default_statistic(np.zeros(3))
    Identity()
    >>> default_statistic(np.array(["a", "b"]))
    Indicator(event=('a',), rowwise=False)
    """
    if mechanism is not None and callable(getattr(mechanism, "privacy_loss", None)):
        return PrivacyLoss(mechanism)
    o = np.asarray(outputs)
    if o.ndim == 1 or (o.ndim == 2 and o.shape[1] == 1):
        if np.issubdtype(o.dtype, np.number) or o.dtype == np.bool_:
            return Identity()
        if o.ndim == 1 and o.size:
            return Indicator((o[0].item(),))
    raise ValueError(
        f"no default statistic for outputs of shape {o.shape} and dtype {o.dtype}; pass a Projection "
        "(vector outputs) or an Indicator (discrete outputs)"
    )
