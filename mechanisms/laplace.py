"""The Laplace mechanism ``f(x) + Lap(scale)`` per coordinate.

Used by: Chandak, Hu & Hegde (2023) (DPUCB-MAT / DPTS-MAT: lazy Laplace sums per arm);
Wang et al. (2021) (Cascading-UCB: the hybrid mechanism's Laplace node releases, and the LDP
randomizer of Algorithm 2, ℓ1-sensitivity K over a K-vector of clicks); Hu et al. (2024)
(Anytime-Lazy-UCB and Lazy-DP-TS: one Lap(1/ε) draw per epoch sum); Chen et al. (2020)
(CUCB-LDP: per-user Lap(K/ε) reports; CUCB-DP: Laplace noise on the nodes of the binary-tree
counter). The counters and lazy sums themselves live in :mod:`mechanisms.continual.tree`,
:mod:`mechanisms.continual.hybrid` and :mod:`mechanisms.continual.epoch_sums`.

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
from typing import ClassVar

import numpy as np

from dpaudit.events import LaplaceEvent, Neighbouring
from dpaudit.validation import check_positive
from mechanisms.additive import AdditiveNoiseMechanism, checked_fields, l1_bound
from mechanisms.base import Norm, laplace_scale_for

__all__ = ["LaplaceMechanism"]


@dataclass(frozen=True)
class LaplaceMechanism(AdditiveNoiseMechanism):
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

    noise_parameter: ClassVar[str] = "scale"
    standard_noise: ClassVar[str] = "laplace"

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
        s, n, d, nb = checked_fields(sensitivity, norm, dim, neighbouring)
        return cls(laplace_scale_for(l1_bound(s, n, d), eps), s, n, d, nb)  # exactly ε, never above

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

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size=shape)

    def _log_density_terms(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        return -np.abs(output - x) / self.scale - math.log(2.0 * self.scale)

    def _loss_terms(self, output: np.ndarray, x: np.ndarray, x_prime: np.ndarray) -> np.ndarray:
        # bounded by ‖x − x'‖₁/scale ≤ ε; exactly ±|x − x'|/scale outside [min, max] of x and x'
        # (the atoms of the loss: computed as |o − x'| − |o − x| they would scatter by an ulp,
        # and a threshold test at an atom would count a rounding-dependent part of it)
        raw = np.abs(output - x_prime) - np.abs(output - x)
        lo, hi = np.minimum(x, x_prime), np.maximum(x, x_prime)
        return np.where(output <= lo, x_prime - x, np.where(output >= hi, x - x_prime, raw)) / self.scale
