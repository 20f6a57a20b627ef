"""The Gaussian mechanism ``f(x) + N(0, σ² I)``.

Used by: Wang et al. (2021) (Cascading-UCB / CUCB under Gaussian LDP, Algorithms 3–4:
ℓ2-sensitivity √K, i.e. ``norm="linf", dim=K``); Ou, Avella Medina & Cummings (2024) (Thompson
sampling with Gaussian posteriors: each round's posterior draws followed by argmax form a
Gaussian RNM, see :mod:`mechanisms.report_noisy_max`); and the auditors' reference mechanism.

The sensitivity is stated in ``norm`` over outputs of dimension ``dim``; the recorded
:class:`~dpaudit.events.GaussianEvent` carries the implied ℓ2-sensitivity Δ₂ (ℓ2 ≤ ℓ1 and
ℓ2 ≤ √d·ℓ∞), so the release is exactly μ-GDP with μ = Δ₂/σ.

Privacy loss of output ``o``: ``L(o) = (‖o − x'‖² − ‖o − x‖²)/(2σ²)``. Under ``x`` it is
distributed as N(m²/2, m²) with m = ‖x − x'‖₂/σ (unbounded: not a pure-DP mechanism).

Example:
    >>> import numpy as np
    >>> from mechanisms.gaussian import GaussianMechanism
    >>> mech = GaussianMechanism(sigma=2.0)
    >>> mech.event, mech.mu
    (GaussianEvent(sigma=2.0, sensitivity=1.0), 0.5)
    >>> mech.sample(0.0, np.random.default_rng(1), size=(3, 2)).shape
    (3, 2)
    >>> float(mech.privacy_loss(np.array([0.5]), 1.0, 0.0)[0])   # midpoint: loss 0
    0.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.events import GaussianEvent, Neighbouring
from dpaudit.numerics import square
from dpaudit.validation import check_positive
from mechanisms.additive import AdditiveNoiseMechanism, checked_fields, l2_bound
from mechanisms.base import Norm, gaussian_sigma_for

__all__ = ["GaussianMechanism"]


@dataclass(frozen=True)
class GaussianMechanism(AdditiveNoiseMechanism):
    """``x + N(0, σ² I)``.

    Attributes:
        sigma: noise standard deviation σ > 0.
        sensitivity: bound on ``‖f(x) − f(x')‖`` in ``norm``.
        norm: the sensitivity norm (default ``"l2"``).
        dim: output dimension d.
        neighbouring: the relation the sensitivity was computed for.
    """

    sigma: float
    sensitivity: float = 1.0
    norm: Norm = Norm.L2
    dim: int = 1
    neighbouring: Neighbouring = Neighbouring.REPLACE

    noise_parameter: ClassVar[str] = "sigma"
    standard_noise: ClassVar[str] = "standard_normal"

    @classmethod
    def from_mu(
        cls,
        mu: float,
        sensitivity: float = 1.0,
        *,
        norm: Norm | str = Norm.L2,
        dim: int = 1,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
    ) -> GaussianMechanism:
        """The Gaussian mechanism that is exactly ``mu``-GDP: σ = ℓ2-sensitivity / μ."""
        m = check_positive("mu", mu)
        s, n, d, nb = checked_fields(sensitivity, norm, dim, neighbouring)
        return cls(gaussian_sigma_for(l2_bound(s, n, d), m), s, n, d, nb)  # exactly μ, never above

    @property
    def l2_sensitivity(self) -> float:
        return l2_bound(self.sensitivity, self.norm, self.dim)

    @property
    def mu(self) -> float:
        """The GDP parameter Δ₂/σ."""
        return self.l2_sensitivity / self.sigma

    @property
    def event(self) -> GaussianEvent:
        return GaussianEvent(sigma=self.sigma, sensitivity=self.l2_sensitivity)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return self.sigma * rng.standard_normal(size=shape)

    def _log_density_terms(self, output: np.ndarray, x: np.ndarray) -> np.ndarray:
        z = (output - x) / self.sigma
        return -0.5 * z * z - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)

    def _loss_terms(self, output: np.ndarray, x: np.ndarray, x_prime: np.ndarray) -> np.ndarray:
        # (‖o−x'‖² − ‖o−x‖²)/(2σ²) = (x − x')·(o − (x + x')/2) / σ², stable form
        return (x - x_prime) * (output - 0.5 * (x + x_prime)) / square(self.sigma)
