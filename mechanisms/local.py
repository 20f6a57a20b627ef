"""Local randomizers (client side): what one user sends, and its LDP event.

Each randomizer is a frozen :class:`~mechanisms.base.NoiseMechanism`: ``sample(x, rng,
size)`` draws outputs (leading batch dimensions ``size``) and records nothing;
``release(x, rng, ledger, units=[user])`` samples once and records :attr:`event` with the
user (report) as the data unit, so the ledger composes per user and runs users in parallel
(LDP: one report per user).

:class:`LaplaceVectorRandomizer`
    ``x + Lap(b)`` per coordinate; ε = Δ₁/b. With ``domain=(lo, hi)`` inputs are checked to lie
    in ``[lo, hi]^d`` and the declared Δ₁ must cover the ℓ1 diameter ``d·(hi − lo)``. CUCB-LDP1
    (Chen et al. (2020), Algorithm 1): the ``|S_t| ≤ K`` outcomes, ``b = K/ε``, ``Δ₁ = K``.
:class:`GaussianVectorRandomizer`
    ``x + N(0, σ² I)``; μ = Δ₂/σ (exact GDP), ``classical(ε, δ, Δ₂)`` gives
    ``σ = Δ₂·sqrt(2 ln(1.25/δ))/ε``. CUCB under LDP (Wang et al. (2021), Algorithm 4):
    ``Δ₂ = √K``.
:class:`CascadeClickRandomizer`
    Wang et al. (2021), Algorithms 2 (Laplace, ``b = K/ε``) and 3 (Gaussian,
    ``σ = sqrt(2K ln(1.25/δ))/ε``) **as specified**: for a click at position ``C`` (``None``
    = no click, ``C = ∞``) the user sends one noisy value ``1{C = k} + noise`` for each
    *observed* position ``k = 1 .. min(C, K)``: **``min(C, K)`` values, so the number of
    values is the click position itself, sent un-noised.** The paper's accounting (≤ K values
    of sensitivity 1 at scale ``K/ε``: ε by basic composition; Gaussian with Δ₂ = √K) is what
    :attr:`event` records, but it ignores the length: for ``K ≥ 2`` outputs of neighbouring
    users can have disjoint supports (``C = 1`` vs ``C = None``), so the release is not
    (ε, δ)-LDP for any δ < 1 (:attr:`leaks_length`, and :meth:`privacy_loss` returns ±inf).
    ``report="all-positions"`` is the fixed-length variant (**not in the paper**; it removes the
    length leak): always K values ``1{C = k}``, a one-hot-or-zero vector with Δ₁ = 2,
    Δ₂ = √2, recorded with those sensitivities.
:class:`LeastPulledLaplaceRandomizer`
    CUCB-LDP2 (Chen et al. (2020), Algorithm 2): the coordinate ``I_t = argmin_{i∈S_t} T_{t−1,i}``
    is chosen from public counts (ties: smallest arm index, a public rule), and the user sends
    the one scalar ``X_{t,I_t} + Lap(1/ε)``. Releases ``I_t`` (data-independent) and one value.

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import Ledger
    >>> rng = np.random.default_rng(0)
    >>> alg2 = CascadeClickRandomizer.alg2(num_positions=4, epsilon=1.0)
    >>> alg2.sample(2, rng).shape, alg2.sample(None, rng).shape   # click at 2 vs no click
    ((2,), (4,))
    >>> alg2.leaks_length, alg2.event.epsilon
    (True, 1.0)
    >>> ledger = Ledger()
    >>> _ = alg2.release(3, rng, ledger, units=[7])
    >>> ledger.charges()
    {7: 1}
    >>> ldp2 = LeastPulledLaplaceRandomizer.from_epsilon(1.0)
    >>> ldp2.select([5, 2, 9], counts={2: 4, 5: 3, 9: 3})   # argmin count, ties → smallest arm
    5
    >>> vec = LaplaceVectorRandomizer.from_epsilon(1.0, sensitivity=3.0, domain=(0.0, 1.0))
    >>> float(vec.privacy_loss(np.ones(3), np.ones(3), np.zeros(3)))   # the worst case: ε
    1.0
"""

from __future__ import annotations

import abc
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from dpaudit.events import GaussianEvent, LaplaceEvent, Neighbouring, PrivacyEvent
from dpaudit.ledger import Ledger
from dpaudit.numerics import square
from dpaudit.validation import check_integer, check_positive, check_probability
from mechanisms.additive import AdditiveNoiseMechanism, norm_of
from mechanisms.base import (
    NoiseMechanism,
    Norm,
    check_batch,
    check_neighbouring,
    check_norm,
    check_rng,
    record_release,
)
from mechanisms.gaussian import GaussianMechanism
from mechanisms.laplace import LaplaceMechanism

__all__ = [
    "LaplaceVectorRandomizer",
    "GaussianVectorRandomizer",
    "CascadeClickRandomizer",
    "LeastPulledLaplaceRandomizer",
    "classical_gaussian_sigma",
]


def classical_gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float = 1.0) -> float:
    """``σ = Δ₂·sqrt(2 ln(1.25/δ))/ε`` (Dwork & Roth Thm A.1; proved for ε < 1 only — the
    certified guarantee of a Gaussian release comes from the exact GDP accounting instead).

    >>> round(classical_gaussian_sigma(1.0, 1e-3, 2.0), 3)   # Wang et al. 2021, Alg. 3, K = 4
    7.553
    """
    eps = check_positive("epsilon", epsilon)
    d = check_probability("delta", delta)
    return check_positive("l2_sensitivity", l2_sensitivity) * math.sqrt(2 * math.log(1.25 / d)) / eps


def _check_domain(domain: tuple[float, float] | None) -> tuple[float, float] | None:
    if domain is None:
        return None
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(f"domain must be None or a pair (lo, hi), got {domain!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"domain must satisfy -inf < lo < hi < inf, got {domain!r}")
    return (lo, hi)


def _vector_input(x: object, domain: tuple[float, float] | None) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim > 1:
        raise ValueError(f"x must be a scalar or a 1-d vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must be finite")
    if domain is not None and (np.any(arr < domain[0]) or np.any(arr > domain[1])):
        raise ValueError(f"x must lie in the declared domain [{domain[0]}, {domain[1]}]")
    return arr


class _VectorRandomizer(NoiseMechanism):
    """``x + noise`` on a reported vector of any length d: the output mechanism of dimension d
    (:meth:`mechanism`), plus an optional input ``domain`` whose diameter in ``norm`` the declared
    sensitivity must cover. Subclasses are frozen dataclasses naming their noise parameter."""

    noise_parameter: ClassVar[str]
    required_norm: ClassVar[Norm]
    domain: tuple[float, float] | None

    def __post_init__(self) -> None:
        name = self.noise_parameter
        object.__setattr__(self, name, check_positive(name, getattr(self, name)))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "domain", _check_domain(self.domain))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        norm = check_norm(self.norm)
        if norm is not self.required_norm:
            raise ValueError(
                f"norm must be {self.required_norm.value!r} for {type(self).__name__}, got {self.norm!r}"
            )
        object.__setattr__(self, "norm", norm)

    @abc.abstractmethod
    def mechanism(self, dim: int) -> AdditiveNoiseMechanism:
        """The output mechanism that randomizes a report of length ``dim``."""

    def _check(self, x: object) -> np.ndarray:
        arr = _vector_input(x, self.domain)
        if self.domain is not None:
            d = max(arr.size, 1)
            diam = norm_of(np.full(d, self.domain[1] - self.domain[0]), self.norm)
            if diam > self.sensitivity * (1 + 1e-12):
                raise ValueError(
                    f"declared sensitivity {self.sensitivity} is below the {self.norm.value} diameter "
                    f"{diam:.6g} of [{self.domain[0]}, {self.domain[1]}]^{d}"
                )
        return arr

    def sample(
        self, x: object, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> np.ndarray:
        arr = self._check(x)
        return self.mechanism(max(arr.size, 1)).sample(arr, rng, size)

    def privacy_loss(self, y: object, x: object, x_prime: object) -> np.ndarray:
        """``log p(y | x) − log p(y | x')`` (batch dimensions of ``y`` kept); ``x`` and ``x'``
        must be neighbours (within ``sensitivity`` in ``norm``)."""
        a, b = self._check(x), self._check(x_prime)
        return self.mechanism(max(a.size, 1)).privacy_loss(y, a, b)


@dataclass(frozen=True)
class LaplaceVectorRandomizer(_VectorRandomizer):
    """``x + Lap(scale)`` on every coordinate of a reported vector (ℓ1 sensitivity)."""

    scale: float
    sensitivity: float = 1.0
    domain: tuple[float, float] | None = None
    neighbouring: Neighbouring = Neighbouring.REPLACE
    norm: Norm = Norm.L1

    noise_parameter: ClassVar[str] = "scale"
    required_norm: ClassVar[Norm] = Norm.L1

    @classmethod
    def from_epsilon(
        cls, epsilon: float, sensitivity: float = 1.0, domain: tuple[float, float] | None = None
    ) -> LaplaceVectorRandomizer:
        """Scale ``sensitivity/ε``."""
        sens = check_positive("sensitivity", sensitivity)
        return cls(scale=sens / check_positive("epsilon", epsilon), sensitivity=sens, domain=domain)

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    @property
    def event(self) -> PrivacyEvent:
        return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)

    def mechanism(self, dim: int) -> LaplaceMechanism:
        return LaplaceMechanism(self.scale, self.sensitivity, Norm.L1, dim, self.neighbouring)


@dataclass(frozen=True)
class GaussianVectorRandomizer(_VectorRandomizer):
    """``x + N(0, σ² I)`` on a reported vector with ℓ2 sensitivity ``sensitivity``."""

    sigma: float
    sensitivity: float = 1.0
    domain: tuple[float, float] | None = None
    neighbouring: Neighbouring = Neighbouring.REPLACE
    norm: Norm = Norm.L2

    noise_parameter: ClassVar[str] = "sigma"
    required_norm: ClassVar[Norm] = Norm.L2

    @classmethod
    def classical(
        cls,
        epsilon: float,
        delta: float,
        l2_sensitivity: float = 1.0,
        domain: tuple[float, float] | None = None,
    ) -> GaussianVectorRandomizer:
        """σ from :func:`classical_gaussian_sigma`."""
        sigma = classical_gaussian_sigma(epsilon, delta, l2_sensitivity)
        return cls(sigma=sigma, sensitivity=l2_sensitivity, domain=domain)

    @property
    def mu(self) -> float:
        return self.sensitivity / self.sigma

    @property
    def event(self) -> PrivacyEvent:
        return GaussianEvent(sigma=self.sigma, sensitivity=self.sensitivity)

    def mechanism(self, dim: int) -> GaussianMechanism:
        return GaussianMechanism(self.sigma, self.sensitivity, Norm.L2, dim, self.neighbouring)


@dataclass(frozen=True)
class CascadeClickRandomizer(NoiseMechanism):
    """The local randomizer of Wang et al. (2021), Algorithms 2–3 (see the module docstring).

    Args:
        num_positions: K, the list length.
        noise: ``"laplace"`` (``scale`` = b) or ``"gaussian"`` (``scale`` = σ).
        scale: the per-value noise scale.
        report: ``"observed"`` (the paper: ``min(C, K)`` values) or ``"all-positions"``
            (fixed length K; not in the paper).
    """

    num_positions: int
    noise: Literal["laplace", "gaussian"]
    scale: float
    report: Literal["observed", "all-positions"] = "observed"
    neighbouring: Neighbouring = Neighbouring.REPLACE
    sensitivity: float = 0.0  # derived in __post_init__
    norm: Norm = Norm.L1  # derived in __post_init__

    def __post_init__(self) -> None:
        K = check_integer("num_positions", self.num_positions)
        object.__setattr__(self, "num_positions", K)
        if self.noise not in ("laplace", "gaussian"):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {self.noise!r}")
        if self.report not in ("observed", "all-positions"):
            raise ValueError(f"report must be 'observed' or 'all-positions', got {self.report!r}")
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        lap = self.noise == "laplace"
        if self.report == "observed":  # the paper's accounting: K values of sensitivity 1
            sens = float(K) if lap else math.sqrt(K)
        else:  # one-hot-or-zero vector
            sens = 2.0 if lap else math.sqrt(2.0)
        object.__setattr__(self, "sensitivity", sens)
        object.__setattr__(self, "norm", Norm.L1 if lap else Norm.L2)

    @classmethod
    def alg2(cls, num_positions: int, epsilon: float) -> CascadeClickRandomizer:
        """Wang et al. (2021), Algorithm 2: ``Lap(K/ε)`` per observed position."""
        eps = check_positive("epsilon", epsilon)
        return cls(num_positions, "laplace", num_positions / eps)

    @classmethod
    def alg3(cls, num_positions: int, epsilon: float, delta: float) -> CascadeClickRandomizer:
        """Wang et al. (2021), Algorithm 3: ``N(0, σ²)``, ``σ = sqrt(2K ln(1.25/δ))/ε`` per observed
        position."""
        sigma = classical_gaussian_sigma(epsilon, delta, math.sqrt(num_positions))
        return cls(num_positions, "gaussian", sigma)

    @property
    def event(self) -> PrivacyEvent:
        """The event the paper's argument accounts for (excludes the report length)."""
        if self.noise == "laplace":
            return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)
        return GaussianEvent(sigma=self.scale, sensitivity=self.sensitivity)

    @property
    def leaks_length(self) -> bool:
        """True if the number of values sent depends on the click (``"observed"``, K ≥ 2)."""
        return self.report == "observed" and self.num_positions >= 2

    def _click(self, click: object) -> int:
        """Normalise a click to 1..K, or K+1 for "no click" (``None``, ``inf`` or > K)."""
        K = self.num_positions
        if click is None:
            return K + 1
        if isinstance(click, float) and math.isinf(click) and click > 0:
            return K + 1
        if isinstance(click, bool) or not isinstance(click, (int, np.integer)) or click < 1:
            raise ValueError(f"click must be an integer >= 1, None or inf (no click), got {click!r}")
        return min(int(click), K + 1)

    def values(self, click: object) -> np.ndarray:
        """The exact (noise-free) vector reported for ``click``: ``1{C = k}`` for the reported k."""
        c = self._click(click)
        K = self.num_positions
        length = min(c, K) if self.report == "observed" else K
        out = np.zeros(length)
        if c <= K:
            out[c - 1] = 1.0
        return out

    def num_values(self, click: object) -> int:
        """How many values are sent for ``click``: ``min(C, K)`` (observed) or ``K``."""
        return int(self.values(click).size)

    def sample(
        self, x: object, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> np.ndarray:
        v = self.values(x)
        rng = check_rng(rng)
        shape = check_batch(size) + v.shape
        if self.noise == "laplace":
            return v + rng.laplace(0.0, self.scale, size=shape)
        return v + rng.normal(0.0, self.scale, size=shape)

    def privacy_loss(self, y: object, click: object, click_prime: object) -> np.ndarray:
        """``log p(y | C) − log p(y | C')``; ``+inf`` if ``y``'s length is possible only
        under ``C`` (and ``−inf`` if only under ``C'``): the length leak."""
        a, b = self.values(click), self.values(click_prime)
        yy = np.asarray(y, dtype=float)
        n = yy.shape[-1] if yy.ndim else 1
        ok_a, ok_b = n == a.size, n == b.size
        if not (ok_a or ok_b):
            raise ValueError(f"y has {n} values, impossible under both clicks ({a.size}, {b.size})")
        batch = yy.shape[:-1]
        if ok_a and not ok_b:
            return np.full(batch, np.inf)
        if ok_b and not ok_a:
            return np.full(batch, -np.inf)
        if self.noise == "laplace":
            val = (np.abs(yy - b) - np.abs(yy - a)) / self.scale
        else:
            val = ((yy - b) ** 2 - (yy - a) ** 2) / (2 * square(self.scale))
        return val.sum(axis=-1)


@dataclass(frozen=True)
class LeastPulledLaplaceRandomizer(NoiseMechanism):
    """CUCB-LDP2 (Chen et al. 2020): one scalar ``X_{t,I_t} + Lap(scale)`` with ``I_t`` from public counts.

    ``sample``/``release`` take the chosen outcome ``X_{t,I_t}`` (a scalar in ``domain``);
    :meth:`report` does the whole client step (select ``I_t``, randomise, record).
    """

    scale: float
    sensitivity: float = 1.0
    domain: tuple[float, float] | None = (0.0, 1.0)
    neighbouring: Neighbouring = Neighbouring.REPLACE
    norm: Norm = Norm.L1

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "domain", _check_domain(self.domain))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        if self.domain is not None and self.domain[1] - self.domain[0] > self.sensitivity * (1 + 1e-12):
            raise ValueError(
                f"declared sensitivity {self.sensitivity} is below the width of the domain {self.domain}"
            )

    @classmethod
    def from_epsilon(cls, epsilon: float, sensitivity: float = 1.0) -> LeastPulledLaplaceRandomizer:
        sens = check_positive("sensitivity", sensitivity)
        return cls(scale=sens / check_positive("epsilon", epsilon), sensitivity=sens, domain=(0.0, sens))

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    @property
    def event(self) -> PrivacyEvent:
        return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)

    @staticmethod
    def select(super_arm: Iterable[int], counts: Mapping[int, int] | np.ndarray) -> int:
        """``I_t = argmin_{i ∈ S_t} T_{t−1,i}``, ties to the smallest arm index (public rule)."""
        arms = [int(i) for i in super_arm]
        if not arms:
            raise ValueError("super_arm must contain at least one arm")
        return min(arms, key=lambda i: (int(counts[i]), i))

    def sample(
        self, x: object, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> np.ndarray:
        arr = _vector_input(x, self.domain)
        if arr.ndim != 0:
            raise ValueError(f"x must be the scalar outcome of the selected arm, got shape {arr.shape}")
        rng = check_rng(rng)
        return arr + rng.laplace(0.0, self.scale, size=check_batch(size))

    def report(
        self,
        outcomes: Mapping[int, float] | np.ndarray,
        super_arm: Iterable[int],
        counts: Mapping[int, int] | np.ndarray,
        rng: np.random.Generator,
        ledger: Ledger | None = None,
        *,
        unit: Hashable | None = None,
        size: int | tuple[int, ...] | None = None,
    ) -> tuple[int, np.ndarray]:
        """The client step: returns ``(I_t, X_{t,I_t} + Lap(scale))`` and records one event
        with ``units=[unit]`` (if a unit is given; else for all units)."""
        i = self.select(super_arm, counts)
        out = self.sample(outcomes[i], rng, size)
        units = None if unit is None else [unit]
        record_release(ledger, self.event, label=f"CUCB-LDP2 report arm {i}", arm=i, units=units)
        return i, out

    def privacy_loss(self, y: object, x: float, x_prime: float) -> np.ndarray:
        """``log p(y | x) − log p(y | x')`` for the scalar report."""
        yy = np.asarray(y, dtype=float)
        return (np.abs(yy - float(x_prime)) - np.abs(yy - float(x))) / self.scale
