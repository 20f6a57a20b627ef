"""What the continual counters share: the checks of their leaves and the log of their noisy releases.

:class:`ReleaseLog` keeps every noisy release of a counter (value, noise, span of steps), so an
audit can read them back (:meth:`ReleaseLog.released_values`) and compute their exact privacy
loss between two neighbouring streams (:meth:`ReleaseLog.privacy_loss`).

Example:
    >>> check_shape(3), check_shape(()), as_leaf([1.0, 2.0], (2,)).tolist()
    ((3,), (), [1.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpaudit.validation import check_integer
from mechanisms.continual.noise import NodeNoise

__all__ = ["check_shape", "as_leaf", "ReleaseLog"]


def check_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    """The shape of one leaf: an integer ``m`` is ``(m,)``; every entry an integer >= 1."""
    if isinstance(shape, bool):
        raise _bad_shape(shape)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        out = tuple(shape)
    except TypeError:
        raise _bad_shape(shape) from None
    for s in out:
        check_integer("shape entries", s)
    return tuple(int(s) for s in out)



def _bad_shape(shape: object) -> ValueError:
    return ValueError(f"shape must be an integer or a tuple of integers >= 1, got {shape!r}")


def as_leaf(x: object, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as a finite float array of the leaf ``shape``, or ``ValueError``."""
    arr = np.asarray(x, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"x must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must be finite")
    return arr



class ReleaseLog:
    """Keeps every noisy release (value, noise, span of steps) for auditing."""

    size: tuple[int, ...]
    shape: tuple[int, ...]

    def _init_log(self) -> None:
        self._rel_values: list[np.ndarray] = []
        self._rel_noise: list[NodeNoise] = []
        self.release_spans: list[tuple[int, int]] = []

    def _log(self, value: np.ndarray, noise: NodeNoise, first: int, last: int) -> None:
        self._rel_values.append(value)
        self._rel_noise.append(noise)
        self.release_spans.append((first, last))

    def released_values(self) -> np.ndarray:
        """Every noisy release so far, shape ``size + (n_releases,) + shape``, in the order of
        :attr:`release_spans` (1-based inclusive step ranges). The layout depends only on the
        number of steps, so runs on neighbouring streams of equal length line up."""
        if not self._rel_values:
            return np.zeros(self.size + (0,) + self.shape)
        return np.stack(self._rel_values, axis=len(self.size))

    def privacy_loss(self, values: object, x: object, x_prime: object) -> np.ndarray:
        """Exact log density ratio ``log p(values | x) − log p(values | x')`` of the releases
        (layout of this run) between streams ``x`` and ``x'`` of this run's length; the
        batch dimensions of ``values`` are kept."""
        n = len(self.release_spans)
        xs, xp = (np.asarray(v, dtype=float) for v in (x, x_prime))
        for name, arr in (("x", xs), ("x_prime", xp)):
            if arr.shape[1:] != self.shape or arr.ndim < 1:
                raise ValueError(f"{name} must have shape (n,) + {self.shape}, got {arr.shape}")
        last = max((b for _, b in self.release_spans), default=0)
        if xs.shape[0] < last or xp.shape[0] < last:
            raise ValueError(f"x and x_prime must have at least {last} steps")
        y = np.asarray(values, dtype=float)
        k = len(self.shape)
        if y.ndim < k + 1 or y.shape[y.ndim - k - 1 :] != (n,) + self.shape:
            raise ValueError(f"values must end with shape {(n,) + self.shape}, got {y.shape}")
        cs = np.concatenate([np.zeros((1,) + self.shape), np.cumsum(xs, axis=0)])
        cp = np.concatenate([np.zeros((1,) + self.shape), np.cumsum(xp, axis=0)])
        yr_all = np.moveaxis(y, y.ndim - k - 1, 0)  # (n,) + batch + shape
        coord_axes = tuple(range(yr_all.ndim - 1 - k, yr_all.ndim - 1))
        total = np.zeros(yr_all.shape[1 : yr_all.ndim - k])
        for r, ((a, b), noise) in enumerate(zip(self.release_spans, self._rel_noise)):
            total = total + noise.log_ratio(yr_all[r], cs[b] - cs[a - 1], cp[b] - cp[a - 1], coord_axes)
        return total

