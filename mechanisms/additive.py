"""What every additive-noise mechanism ``f(x) + i.i.d. noise`` shares.

:class:`AdditiveNoiseMechanism` validates the common fields (the noise parameter, sensitivity,
norm, dim, neighbouring relation), samples ``x + noise`` with a batch dimension, checks that two
inputs are neighbours before computing a privacy loss, and sums per-coordinate terms.
A subclass (:class:`~mechanisms.laplace.LaplaceMechanism`,
:class:`~mechanisms.gaussian.GaussianMechanism`) names its noise parameter and supplies the
noise draw, the per-coordinate log density and the per-coordinate privacy loss.

The sensitivity is stated in ``norm`` over outputs of dimension ``dim``; :func:`l1_bound` and
:func:`l2_bound` give the sensitivity in the norm a mechanism's analysis needs
(ℓ1 ≤ √d·ℓ2 ≤ d·ℓ∞ and ℓ2 ≤ ℓ1, ℓ2 ≤ √d·ℓ∞).

Example:
    >>> import numpy as np
    >>> from mechanisms.additive import l1_bound, l2_bound, norm_of
    >>> from mechanisms.base import Norm
    >>> l1_bound(1.0, Norm.LINF, 4), l2_bound(1.0, Norm.LINF, 4), l2_bound(2.0, Norm.L1, 4)
    (4.0, 2.0, 2.0)
    >>> norm_of(np.array([3.0, -4.0]), Norm.L2)
    5.0
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

import numpy as np

from dpaudit.events import Neighbouring
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_norm, check_rng

__all__ = ["AdditiveNoiseMechanism", "as_vector", "check_dim", "l1_bound", "l2_bound", "norm_of"]


def check_dim(dim: int) -> int:
    """``dim`` as a positive integer (``ValueError`` naming it otherwise)."""
    return check_integer("dim", dim)


def l1_bound(sensitivity: float, norm: Norm, dim: int) -> float:
    """The ℓ1-sensitivity implied by ``sensitivity`` in ``norm`` for outputs of dimension ``dim``."""
    if norm is Norm.L1:
        return sensitivity
    if norm is Norm.L2:
        return sensitivity * math.sqrt(dim)
    return sensitivity * dim


def l2_bound(sensitivity: float, norm: Norm, dim: int) -> float:
    """The ℓ2-sensitivity implied by ``sensitivity`` in ``norm`` for outputs of dimension ``dim``."""
    if norm is Norm.LINF:
        return sensitivity * math.sqrt(dim)
    return sensitivity  # ℓ2 ≤ ℓ1


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


def checked_fields(
    sensitivity: float, norm: Norm | str, dim: int, neighbouring: Neighbouring | str
) -> tuple[float, Norm, int, Neighbouring]:
    """The common fields, validated (for the ``from_*`` constructors)."""
    return (check_positive("sensitivity", sensitivity), check_norm(norm), check_dim(dim),
            check_neighbouring(neighbouring))  # fmt: skip


class AdditiveNoiseMechanism(NoiseMechanism):
    """Base of ``x + noise`` mechanisms; subclasses are frozen dataclasses with the fields
    ``<noise_parameter>``, ``sensitivity``, ``norm``, ``dim`` and ``neighbouring``."""

    noise_parameter: ClassVar[str]
    standard_noise: ClassVar[str]
    """The unit-scale law the noise is a multiple of (a :data:`mechanisms.randomness.SAMPLERS`
    name): ``noise = <noise_parameter> × standard draw``."""
    dim: int

    def __post_init__(self) -> None:
        name = self.noise_parameter
        object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        fields = checked_fields(self.sensitivity, self.norm, self.dim, self.neighbouring)
        for field, value in zip(("sensitivity", "norm", "dim", "neighbouring"), fields):
            object.__setattr__(self, field, value)

    @abc.abstractmethod
    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """i.i.d. noise of the given shape."""

    @abc.abstractmethod
    def _log_density_terms(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Per-coordinate log p(output | x)."""

    @abc.abstractmethod
    def _loss_terms(self, output: np.ndarray, x: np.ndarray, x_prime: np.ndarray) -> np.ndarray:
        """Per-coordinate log p(output | x) − log p(output | x′)."""

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Outputs of shape ``size + x.shape``. Records nothing (use :meth:`release`)."""
        rng = check_rng(rng)
        xv = as_vector("x", x, self.dim)
        return xv + self._noise(rng, check_batch(size) + xv.shape)

    def release_batch(
        self,
        x: object,
        standard: object,
        ledgers: RunLedgers | None,
        rows: np.ndarray,
        *,
        round: int,
        label: str = "",
    ) -> np.ndarray:
        """Releases for many repetitions at once: ``x[k] + noise`` for repetition ``rows[k]``,
        where ``noise = <noise parameter> × standard[k]`` and ``standard`` holds unit-scale draws
        of :attr:`standard_noise` taken from each repetition's own stream (e.g. a
        :class:`~mechanisms.randomness.NoiseTape` or a block pre-drawn with
        :class:`~mechanisms.randomness.RepRandom`). Each release depends on the data of round
        ``round``: it is recorded as :attr:`event` about that unit in repetition ``rows[k]``'s
        ledger (consecutive rounds coalesce; see :class:`dpaudit.ledger.RunLedgers`).

        >>> import numpy as np
        >>> from dpaudit.ledger import RunLedgers
        >>> from mechanisms.laplace import LaplaceMechanism
        >>> led = RunLedgers(3)
        >>> out = LaplaceMechanism.from_epsilon(0.5).release_batch(
        ...     np.ones(2), np.array([0.0, 1.0]), led, np.array([0, 2]), round=7)
        >>> out.tolist(), [len(led[r]) for r in range(3)]
        ([1.0, 3.0], [0, 0, 0])
        >>> led.flush(); [led[r].charges() for r in range(3)]
        [{7: 1}, {}, {7: 1}]
        """
        xv = np.asarray(x, dtype=float)
        z = np.asarray(standard, dtype=float)
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        if xv.shape != z.shape or xv.shape[:1] != rows.shape:
            raise ValueError(f"x and standard must have the same shape ({rows.size}, ...) as rows, "
                             f"got {xv.shape} and {z.shape}")
        if not np.all(np.isfinite(xv)):
            raise ValueError("x must be finite")
        out = xv + getattr(self, self.noise_parameter) * z
        if ledgers is not None:
            ledgers.charge_rounds(self.event, rows, round, label=label)
            ledgers.released(rows, f"{label or 'release'} round {round}", out)
        return out

    def log_density(self, output: object, x: object) -> np.ndarray:
        """log p(output | x), vectorised over leading batch dimensions of ``output``."""
        xv = as_vector("x", x, self.dim)
        per = self._log_density_terms(np.asarray(output, dtype=float), xv)
        return per if xv.ndim == 0 else per.sum(axis=-1)

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log p(output|x) − log p(output|x')`` for each output (leading dims are a batch).

        ``x`` and ``x'`` must be neighbours, ``‖x − x'‖ ≤ sensitivity`` in ``norm`` (else
        ``ValueError``).
        """
        xv = as_vector("x", x, self.dim)
        xp = as_vector("x_prime", x_prime, self.dim)
        dist = norm_of(xv - xp, self.norm)
        if dist > self.sensitivity * (1 + 1e-12):
            raise ValueError(
                f"x and x_prime are {dist:.6g} apart in {self.norm.value}, more than sensitivity "
                f"{self.sensitivity:.6g}: they are not neighbours for this mechanism"
            )
        per = self._loss_terms(np.asarray(output, dtype=float), xv, xp)
        return per if xv.ndim == 0 else per.sum(axis=-1)
