"""The Laplace mechanism ``f(x) + Lap(scale)`` per coordinate.

Used by: seed 000 (DPUCB-MAT / DPTS-MAT: lazy Laplace sums per arm); seed 001 (Cascading-UCB:
the hybrid mechanism's Laplace node releases, and the LDP randomizer of Alg. 2, ℓ1-sensitivity
K over a K-vector of clicks); seed 002 (Anytime-Lazy-UCB and Lazy-DP-TS: one Lap(1/ε) draw per
epoch sum); seed 003 (CUCB-LDP: per-user Lap(K/ε) reports; CUCB-DP: Laplace noise on the nodes
of the binary-tree counter). The counters and lazy sums themselves live in
:mod:`mechanisms.counting` and :mod:`mechanisms.lazy`.

The sensitivity is stated in an explicit norm (``norm``) over an output of dimension ``dim``;
the recorded :class:`~dpaudit.events.LaplaceEvent` carries the implied ℓ1-sensitivity
(ℓ1 ≤ √d·ℓ2 ≤ d·ℓ∞), so ε = ℓ1-sensitivity / scale.

Privacy loss of output ``o`` between inputs ``x`` and ``x'``:
``L(o) = (‖o − x'‖₁ − ‖o − x‖₁) / scale``; it is bounded by ``‖x − x'‖₁ / scale ≤ ε`` and
equals ``‖x − x'‖₁/scale`` exactly when every coordinate of ``o`` lies on the far side of
``x`` (outside the interval between the two means, in 1-D).

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import Ledger
    >>> from mechanisms.laplace import LaplaceMechanism
    >>> mech = LaplaceMechanism.from_epsilon(0.5)            # sensitivity 1, scale 2
    >>> mech.event
    LaplaceEvent(scale=2.0, sensitivity=1.0)
    >>> ledger = Ledger()
    >>> y = mech.release(10.0, np.random.default_rng(0), ledger, units=[7], label="epoch sum")
    >>> ledger.charges()
    {7: 1}
    >>> mech.sample(10.0, np.random.default_rng(0), size=1_000_000).shape
    (1000000,)
    >>> float(mech.privacy_loss(np.array([20.0]), 1.0, 0.0)[0])   # far side of x: loss = ε
    0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.events import LaplaceEvent, Neighbouring, check_integer, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_norm, check_rng

__all__ = ["LaplaceMechanism", "l1_bound", "norm_of", "check_dim", "as_vector"]


def check_dim(dim: int) -> int:
    return check_integer("dim", dim)


def l1_bound(sensitivity: float, norm: Norm, dim: int) -> float:
    """The ℓ1-sensitivity implied by ``sensitivity`` in ``norm`` for outputs of dimension ``dim``."""
    if norm is Norm.L1:
        return sensitivity
    if norm is Norm.L2:
        return sensitivity * math.sqrt(dim)
    return sensitivity * dim


def norm_of(diff: np.ndarray, norm: Norm) -> float:
    """``‖diff‖`` in the given norm (``diff`` is a 1-D vector)."""
    a = np.abs(np.asarray(diff, dtype=float)).reshape(-1)
    if norm is Norm.L1:
        return float(a.sum())
    if norm is Norm.L2:
        return float(np.sqrt((a * a).sum()))
    return float(a.max()) if a.size else 0.0


def as_vector(name: str, x: object, dim: int) -> np.ndarray:
    """``x`` as a finite float array of shape ``()`` (``dim == 1`` scalars) or ``(dim,)``."""
    arr = np.asarray(x, dtype=float)
    if arr.shape not in ((dim,),) and not (dim == 1 and arr.shape == ()):
        raise ValueError(f"{name} must have shape ({dim},){' or ()' if dim == 1 else ''}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


@dataclass(frozen=True)
class LaplaceMechanism(NoiseMechanism):
    """``x + Lap(scale)`` i.i.d. per coordinate.

    Attributes:
        scale: Laplace scale b > 0.
        sensitivity: bound on ``‖f(x) − f(x')‖`` in ``norm`` for neighbouring x, x'.
        norm: the sensitivity norm (``"l1"``, ``"l2"``, ``"linf"``).
        dim: output dimension d (needed to convert ℓ2/ℓ∞ sensitivity to ℓ1).
        neighbouring: the relation the sensitivity was computed for.
    """

    scale: float
    sensitivity: float = 1.0
    norm: Norm = Norm.L1
    dim: int = 1
    neighbouring: Neighbouring = Neighbouring.REPLACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "norm", check_norm(self.norm))
        object.__setattr__(self, "dim", check_dim(self.dim))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    @classmethod
    def from_epsilon(
        cls,
        epsilon: float,
        sensitivity: float = 1.0,
        *,
        norm: Norm | str = Norm.L1,
        dim: int = 1,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
    ) -> LaplaceMechanism:
        """The Laplace mechanism that is exactly ``epsilon``-DP: scale = ℓ1-sensitivity / ε."""
        eps = check_positive("epsilon", epsilon)
        n = check_norm(norm)
        d = check_dim(dim)
        s = check_positive("sensitivity", sensitivity)
        return cls(l1_bound(s, n, d) / eps, s, n, d, check_neighbouring(neighbouring))

    @property
    def l1_sensitivity(self) -> float:
        return l1_bound(self.sensitivity, self.norm, self.dim)

    @property
    def epsilon(self) -> float:
        """Pure-DP ε = ℓ1-sensitivity / scale."""
        return self.l1_sensitivity / self.scale

    @property
    def event(self) -> LaplaceEvent:
        return LaplaceEvent(scale=self.scale, sensitivity=self.l1_sensitivity)

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Outputs of shape ``size + x.shape``. Records nothing (use :meth:`release`)."""
        rng = check_rng(rng)
        xv = as_vector("x", x, self.dim)
        return xv + rng.laplace(0.0, self.scale, size=check_batch(size) + xv.shape)

    def log_density(self, output: object, x: object) -> np.ndarray:
        """log p(output | x), vectorised over leading batch dimensions of ``output``."""
        xv = as_vector("x", x, self.dim)
        o = np.asarray(output, dtype=float)
        per = -np.abs(o - xv) / self.scale - math.log(2.0 * self.scale)
        return per if xv.ndim == 0 else per.sum(axis=-1)

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log p(output|x) − log p(output|x')`` for each output (leading dims are a batch).

        ``x`` and ``x'`` must be neighbours: ``‖x − x'‖ ≤ sensitivity`` in ``norm``
        (else ``ValueError``), so the result lies in [−ε, ε].
        """
        xv = as_vector("x", x, self.dim)
        xp = as_vector("x_prime", x_prime, self.dim)
        dist = norm_of(xv - xp, self.norm)
        if dist > self.sensitivity * (1 + 1e-12):
            raise ValueError(
                f"x and x_prime are {dist:.6g} apart in {self.norm.value}, more than sensitivity "
                f"{self.sensitivity:.6g}: they are not neighbours for this mechanism"
            )
        o = np.asarray(output, dtype=float)
        per = (np.abs(o - xp) - np.abs(o - xv)) / self.scale
        return per if xv.ndim == 0 else per.sum(axis=-1)
