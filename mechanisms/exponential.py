"""The exponential mechanism over a finite candidate set.

Given utilities u = (u_1, …, u_K) computed from the data, release r with probability
P(r) ∝ exp(β u_r). If every u_r has sensitivity Δ (ℓ∞ over candidates), the loss of every
output is at most 2βΔ; if the change is monotone under add/remove (all utilities move the
same way) it is at most βΔ. This module is parameterised by the target ε, so

    β = ε / (2Δ)   (general, recorded as ``PureDpEvent(ε)`` with ε = 2βΔ)
    β = ε / Δ      (``monotone=True`` under add/remove, ε = βΔ).

Equivalently it is report-noisy-max with Gumbel(1/β) noise.

Used by: a fix of RNM-FTNL (Hu et al. (2024), Algorithm 4), whose Lap(1/ε) report-noisy-max is
only 2ε-DP under the paper's replace relation: permute-and-flip or the exponential mechanism at
ε/2 restores ε (as does Lap(2/ε)); and as the pure-DP selection baseline for auditors.

Example:
    >>> import numpy as np
    >>> from mechanisms.exponential import ExponentialMechanism
    >>> em = ExponentialMechanism(epsilon=2.0, num_candidates=3)
    >>> em.beta, em.event
    (1.0, PureDpEvent(epsilon=2.0))
    >>> p = em.output_distribution([0.0, 1.0, 1.0])
    >>> round(float(p[1] / p[0]), 10) == round(float(np.e), 10)
    True
    >>> em.sample([0.0, 1.0, 1.0], np.random.default_rng(3), size=(2, 5)).shape
    (2, 5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpaudit.events import Neighbouring, PureDpEvent
from dpaudit.numerics import special
from dpaudit.validation import check_flag, check_integer, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_rng

__all__ = ["ExponentialMechanism"]


@dataclass(frozen=True)
class ExponentialMechanism(NoiseMechanism):
    """Sample candidate r with probability ∝ exp(β·u_r), β derived from ``epsilon``.

    Attributes:
        epsilon: the pure-DP guarantee ε of one release.
        num_candidates: K ≥ 2.
        sensitivity: ℓ∞-sensitivity Δ of the utility vector.
        neighbouring: ``REPLACE`` or ``ADD_REMOVE``.
        monotone: under ``ADD_REMOVE``, whether utilities all move in the same direction;
            then β = ε/Δ instead of ε/(2Δ).
    """

    epsilon: float
    num_candidates: int
    sensitivity: float = 1.0
    neighbouring: Neighbouring = Neighbouring.REPLACE
    monotone: bool = False

    norm = Norm.LINF

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "num_candidates", check_integer("num_candidates", self.num_candidates, 2))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        object.__setattr__(self, "monotone", check_flag("monotone", self.monotone))

    @property
    def _monotone_add_remove(self) -> bool:
        return self.monotone and self.neighbouring is Neighbouring.ADD_REMOVE

    @property
    def beta(self) -> float:
        """Inverse temperature β: ε/(2Δ), or ε/Δ for monotone add/remove."""
        factor = 1.0 if self._monotone_add_remove else 2.0
        return self.epsilon / (factor * self.sensitivity)

    @property
    def event(self) -> PureDpEvent:
        return PureDpEvent(epsilon=self.epsilon)

    def _utilities(self, name: str, u: object) -> np.ndarray:
        arr = np.asarray(u, dtype=float)
        if arr.shape != (self.num_candidates,):
            raise ValueError(f"{name} must have shape ({self.num_candidates},), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
        return arr

    def log_output_distribution(self, x: object) -> np.ndarray:
        """log P(output = r | utilities x) for r = 0..K−1 (exact)."""
        z = self.beta * self._utilities("x", x)
        return z - special().logsumexp(z)

    def output_distribution(self, x: object) -> np.ndarray:
        return np.exp(self.log_output_distribution(x))

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Candidate indices (int64) of shape ``size`` by inverse-CDF sampling."""
        rng = check_rng(rng)
        cdf = np.cumsum(self.output_distribution(x))
        shape = check_batch(size)
        idx = np.searchsorted(cdf, rng.random(shape) * cdf[-1], side="right")
        return np.minimum(idx, self.num_candidates - 1)

    def check_neighbours(self, x: object, x_prime: object) -> None:
        d = self._utilities("x_prime", x_prime) - self._utilities("x", x)
        if np.max(np.abs(d)) > self.sensitivity * (1 + 1e-12):
            raise ValueError(f"x and x_prime differ by more than sensitivity {self.sensitivity} in linf")
        if self._monotone_add_remove and np.any(d > 0) and np.any(d < 0):
            raise ValueError("monotone=True but x_prime − x has entries of both signs")

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log P(output|x) − log P(output|x')`` per output index; |loss| ≤ ε."""
        self.check_neighbours(x, x_prime)
        o = np.asarray(output)
        if o.dtype.kind not in "iu" or np.any(o < 0) or np.any(o >= self.num_candidates):
            raise ValueError(f"output must hold integer candidate indices in [0, {self.num_candidates - 1}]")
        return (self.log_output_distribution(x) - self.log_output_distribution(x_prime))[o]
