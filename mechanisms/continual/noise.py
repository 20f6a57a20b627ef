"""The additive noise of one release of a continual mechanism, and its calibration.

:class:`NodeNoise` is ``Lap(scale)`` or ``N(0, scale²)`` per coordinate with the sensitivity it
was calibrated for; :func:`calibrate_noise` gives the per-release noise such that a given number
of releases per data unit composes to ε (Laplace, basic composition) or μ (Gaussian, GDP).
Shared by the counters (:mod:`mechanisms.continual.tree`, :mod:`mechanisms.continual.hybrid`)
and the epoch sums (:mod:`mechanisms.continual.epoch_sums`).

Example:
    >>> n = calibrate_noise("laplace", 4, 1.0, 1.0, None, None)   # 4 releases per unit, ε = 1
    >>> n.scale, n.variance, type(n.event).__name__
    (4.0, 32.0, 'LaplaceEvent')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpaudit.events import GaussianEvent, LaplaceEvent, PrivacyEvent
from dpaudit.numerics import square
from dpaudit.validation import check_positive
from mechanisms.base import Norm, gaussian_sigma_for, laplace_scale_for

__all__ = ["NoiseKind", "NodeNoise", "calibrate_noise"]

NoiseKind = Literal["laplace", "gaussian"]


@dataclass(frozen=True)
class NodeNoise:
    """Additive noise of one release: ``Lap(scale)`` or ``N(0, scale²)`` per coordinate.

    ``sensitivity`` is the bound on ``‖f(x) − f(x')‖`` over neighbouring inputs in the norm
    the noise needs (ℓ1 for Laplace, ℓ2 for Gaussian).
    """

    kind: NoiseKind
    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in ("laplace", "gaussian"):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {self.kind!r}")
        object.__setattr__(self, "scale", check_positive("noise_scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def norm(self) -> Norm:
        return Norm.L1 if self.kind == "laplace" else Norm.L2

    @property
    def event(self) -> PrivacyEvent:
        if self.kind == "laplace":
            return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)
        return GaussianEvent(sigma=self.scale, sensitivity=self.sensitivity)

    @property
    def variance(self) -> float:
        """Variance of one noise coordinate (2b² for Laplace, σ² for Gaussian)."""
        return 2.0 * square(self.scale) if self.kind == "laplace" else square(self.scale)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if self.kind == "laplace":
            return rng.laplace(0.0, self.scale, size=shape)
        return rng.normal(0.0, self.scale, size=shape)

    def log_ratio(
        self, y: np.ndarray, s: float | np.ndarray, s_prime: float | np.ndarray, axis: tuple[int, ...]
    ) -> np.ndarray:
        """``log p(y | s) − log p(y | s')``, summed over ``axis`` (the coordinates)."""
        y = np.asarray(y, dtype=float)
        if self.kind == "laplace":
            val = (np.abs(y - s_prime) - np.abs(y - s)) / self.scale
        else:
            val = ((y - s_prime) ** 2 - (y - s) ** 2) / (2.0 * square(self.scale))
        return val.sum(axis=axis) if axis else val


def calibrate_noise(
    kind: NoiseKind,
    releases_per_unit: int,
    sensitivity: float,
    epsilon: float | None,
    mu: float | None,
    noise_scale: float | None,
) -> NodeNoise:
    """Per-release noise such that ``releases_per_unit`` releases compose to ε (or μ)."""
    given = [v is not None for v in (epsilon, mu, noise_scale)]
    if sum(given) != 1:
        raise ValueError("give exactly one of epsilon (Laplace), mu (Gaussian) or noise_scale")
    if kind not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be 'laplace' or 'gaussian', got {kind!r}")
    sens = check_positive("sensitivity", sensitivity)
    if noise_scale is not None:
        return NodeNoise(kind, noise_scale, sens)
    if epsilon is not None:
        if kind != "laplace":
            raise ValueError("epsilon calibrates Laplace noise; use mu= (GDP) for noise='gaussian'")
        eps = check_positive("epsilon", epsilon)
        return NodeNoise("laplace", laplace_scale_for(sens, eps, releases_per_unit), sens)
    if kind != "gaussian":
        raise ValueError("mu calibrates Gaussian noise; use epsilon= for noise='laplace'")
    m = check_positive("mu", mu)
    return NodeNoise("gaussian", gaussian_sigma_for(sens, m, releases_per_unit), sens)

