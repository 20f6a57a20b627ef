"""The Gaussian mechanism ``f(x) + N(0, σ² I)``.

Used by: seed 001 (Cascading-UCB / CUCB under Gaussian LDP, Algs. 3–4: ℓ2-sensitivity √K,
i.e. ``norm="linf", dim=K``); seed 004 (Thompson sampling with Gaussian posteriors: each
round's posterior draws followed by argmax form a Gaussian RNM, see
:mod:`mechanisms.report_noisy_max`); and the auditors' reference mechanism
(anchors-auditing §2.5).

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

import numpy as np

from dpaudit.events import GaussianEvent, Neighbouring, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_norm, check_rng
from mechanisms.laplace import as_vector, check_dim, norm_of

__all__ = ["GaussianMechanism", "l2_bound"]


def l2_bound(sensitivity: float, norm: Norm, dim: int) -> float:
    """The ℓ2-sensitivity implied by ``sensitivity`` in ``norm`` for outputs of dimension ``dim``."""
    if norm is Norm.LINF:
        return sensitivity * math.sqrt(dim)
    return sensitivity  # ℓ2 ≤ ℓ1


@dataclass(frozen=True)
class GaussianMechanism(NoiseMechanism):
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "norm", check_norm(self.norm))
        object.__setattr__(self, "dim", check_dim(self.dim))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

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
        n = check_norm(norm)
        d = check_dim(dim)
        s = check_positive("sensitivity", sensitivity)
        return cls(l2_bound(s, n, d) / m, s, n, d, check_neighbouring(neighbouring))

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

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Outputs of shape ``size + x.shape``. Records nothing (use :meth:`release`)."""
        rng = check_rng(rng)
        xv = as_vector("x", x, self.dim)
        return xv + self.sigma * rng.standard_normal(size=check_batch(size) + xv.shape)

    def log_density(self, output: object, x: object) -> np.ndarray:
        """log p(output | x), vectorised over leading batch dimensions of ``output``."""
        xv = as_vector("x", x, self.dim)
        z = (np.asarray(output, dtype=float) - xv) / self.sigma
        per = -0.5 * z * z - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)
        return per if xv.ndim == 0 else per.sum(axis=-1)

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log p(output|x) − log p(output|x')`` per output; ``x, x'`` must be neighbours."""
        xv = as_vector("x", x, self.dim)
        xp = as_vector("x_prime", x_prime, self.dim)
        dist = norm_of(xv - xp, self.norm)
        if dist > self.sensitivity * (1 + 1e-12):
            raise ValueError(
                f"x and x_prime are {dist:.6g} apart in {self.norm.value}, more than sensitivity "
                f"{self.sensitivity:.6g}: they are not neighbours for this mechanism"
            )
        o = np.asarray(output, dtype=float)
        # (‖o−x'‖² − ‖o−x‖²)/(2σ²) = (x − x')·(o − (x + x')/2) / σ², stable form
        per = (xv - xp) * (o - 0.5 * (xv + xp)) / (self.sigma**2)
        return per if xv.ndim == 0 else per.sum(axis=-1)
