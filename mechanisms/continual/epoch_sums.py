"""Lazy doubling-epoch ("forgetful") sums: each observation enters exactly one noisy release.

:class:`LazyEpochSums` (per-arm epochs; bandit feedback)
    Every arm ``j`` buffers its fresh observations. Epoch ``r = 0, 1, 2, ...`` of an arm
    holds exactly ``2^r`` of its observations (epoch 0 = the single initial pull / ``w_0``).
    When the epoch fills, one noisy sum ``Σ epoch + noise`` is released, the buffer is
    emptied, and the arm's estimate becomes ``(Σ + noise)/2^r``: older data are discarded
    (forgetful) and the epoch in progress is unused (lazy). An unfinished epoch at the end of
    the run is never released. Epochs of one arm are disjoint, so every observation is in
    exactly one release: the ledger gets **one entry per epoch** with ``units`` = the units
    (round indices) of its observations, and per unit the charge is 1 release of
    ``sensitivity/noise_scale`` (parallel composition across epochs and arms). With bandit
    feedback (one observation per round) every round's total is the per-epoch ε. With
    semi-bandit feedback (K observations per round, the matroid bandits of Chandak,
    Hu & Hegde (2023)) a round is charged K releases, one per arm it touched: basic composition
    gives ``K·ε₀`` (hence ``ε₀ = ε/K``).

:class:`GlobalEpochSums` (global epochs; full information, RNM-FTNL of Hu et al. (2024))
    Epoch ``s`` is rounds ``2^s .. 2^{s+1} − 1`` (epoch 0 = round 1). At its end the K
    per-action sums of that epoch are released either as report-noisy-max (the leader
    ``argmax_j Φ_j + Lap_j(b)``; ``release="argmax"``) or as the K noisy sums
    (``release="sums"``, "naive FTNL"). Each round is in exactly one epoch's release.
    **RNM under replace-one is 2Δ/b-DP, not Δ/b** (replacing one round's reward vector can lower
    one sum and raise another; for K = 2 the exact worst-case loss of Lap(1/ε) tends to 2ε as
    the epoch grows, :func:`mechanisms.report_noisy_max.laplace_rnm_worst_case_loss`);
    calibration with ``epsilon`` uses ``b = 2Δ/ε`` unless ``monotone=True`` under add/remove.
    ``noise_scale=1/ε`` reproduces the paper literally, and the ledger then certifies ``2ε``.

Use by the papers:

* DPUCB-MAT / DPTS-MAT (Chandak, Hu & Hegde (2023), Algorithms 2–3):
  ``LazyEpochSums(L, epsilon=ε/K)``; every round pushes the K observed arms with ``unit=t``
  (round 0 = the initial ``w_0``).
* Anytime-Lazy-UCB / Lazy-DP-TS (Hu et al. (2024), Algorithms 1 and 3):
  ``LazyEpochSums(K, epsilon=ε)``; one push per round.
* RNM-FTNL (Hu et al. (2024), Algorithm 4): ``GlobalEpochSums(K, release="argmax", ...)``.

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import Ledger
    >>> ledger = Ledger()
    >>> lazy = LazyEpochSums(2, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    >>> arms = np.array([0, 1, 0, 0, 1, 1, 0, 0, 0, 0])
    >>> released = lazy.push_many(arms, np.ones(10), units=range(1, 11))
    >>> [(r.arm, r.epoch, r.units[0], r.units[-1]) for r in released]
    [(0, 0, 1, 1), (1, 0, 2, 2), (0, 1, 3, 4), (1, 1, 5, 6), (0, 2, 7, 10)]
    >>> lazy.epoch_size.tolist(), lazy.pending.tolist()
    ([4, 2], [0, 0])
    >>> sorted(set(ledger.charges().values())), len(ledger)   # every observation exactly once
    ([1], 5)
    >>> fl = GlobalEpochSums(3, epsilon=1.0, rng=np.random.default_rng(1))
    >>> fl.noise_scale, fl.event.epsilon   # replace-one RNM: b = 2/ε
    (2.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpaudit.events import LaplaceEvent, LaplaceReportNoisyMaxEvent, Neighbouring, PrivacyEvent
from dpaudit.ledger import Ledger
from dpaudit.numerics import unique
from dpaudit.validation import check_integer
from mechanisms.base import check_batch, check_neighbouring, check_rng, record_release
from mechanisms.continual.noise import NodeNoise, NoiseKind, calibrate_noise
from mechanisms.report_noisy_max import laplace_rnm_log_output_distribution

__all__ = [
    "EpochRelease",
    "LazyEpochSums",
    "GlobalEpochSums",
    "rnm_log_probability",
    "rnm_privacy_loss",
]


@dataclass(frozen=True)
class EpochRelease:
    """One released epoch: which arm (``-1`` for a global epoch), epoch index, the units of
    its observations, and the released value (shape ``size`` / ``size + (K,)``)."""

    arm: int
    epoch: int
    units: tuple[Hashable, ...]
    value: np.ndarray


def _check_ledger(ledger: Ledger | None) -> Ledger | None:
    if ledger is not None and not isinstance(ledger, Ledger):
        raise ValueError(f"ledger must be a dpaudit.ledger.Ledger or None, got {type(ledger).__name__}")
    return ledger


class LazyEpochSums:
    """Per-arm doubling-epoch forgetful sums (module docstring).

    Args:
        num_arms: number of arms.
        noise / epsilon / mu / noise_scale: the noise of one epoch release, calibrated so
            that one release (= one unit's whole charge per arm) is ε-DP (Laplace) or μ-GDP
            (Gaussian), or given directly.
        sensitivity: bound on how much one observation can change its epoch sum (ℓ1 = ℓ2 for
            a scalar): the reward range, 1 for rewards in [0, 1] under replace-one.
        neighbouring: the relation the sensitivity is for.
        rng, size: the generator and leading batch dimensions of the noise.
        ledger: one entry per epoch release (``units`` = its observations' units).

    Attributes:
        epoch_size: ``(num_arms,)`` size ``2^r`` of each arm's last released epoch (0 = none).
        noisy_sum: ``size + (num_arms,)`` the last released noisy epoch sum (NaN = none).
        pending: ``(num_arms,)`` observations buffered in the epoch in progress.
    """

    def __init__(
        self,
        num_arms: int,
        *,
        noise: NoiseKind = "laplace",
        epsilon: float | None = None,
        mu: float | None = None,
        noise_scale: float | None = None,
        sensitivity: float = 1.0,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
        rng: np.random.Generator,
        size: int | tuple[int, ...] | None = None,
        ledger: Ledger | None = None,
        label: str = "lazy epoch",
    ) -> None:
        self.num_arms = check_integer("num_arms", num_arms)
        self.noise: NodeNoise = calibrate_noise(noise, 1, sensitivity, epsilon, mu, noise_scale)
        self.neighbouring = check_neighbouring(neighbouring)
        self.rng = check_rng(rng)
        self.size = check_batch(size)
        self.ledger = _check_ledger(ledger)
        self.label = label
        self.epoch = np.zeros(self.num_arms, dtype=np.int64)  # epoch being filled
        self.pending = np.zeros(self.num_arms, dtype=np.int64)
        self._buf_sum = np.zeros(self.num_arms)
        self._buf_units: list[list[Hashable]] = [[] for _ in range(self.num_arms)]
        self.epoch_size = np.zeros(self.num_arms, dtype=np.int64)
        self.noisy_sum = np.full(self.size + (self.num_arms,), np.nan)
        self.releases: list[EpochRelease] = []
        self._count = 0

    @property
    def event(self) -> PrivacyEvent:
        """The event of one epoch release."""
        return self.noise.event

    @property
    def noise_scale(self) -> float:
        return self.noise.scale

    @property
    def noisy_mean(self) -> np.ndarray:
        """Last released noisy epoch mean per arm, ``size + (num_arms,)`` (NaN = none yet)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.noisy_sum / np.where(self.epoch_size > 0, self.epoch_size, np.nan)

    def _release(self, arm: int, total: float, units: list[Hashable]) -> EpochRelease:
        r = int(self.epoch[arm])
        value = total + self.noise.sample(self.rng, self.size)
        self.noisy_sum[..., arm] = value
        self.epoch_size[arm] = 1 << r
        self.epoch[arm] = r + 1
        rel = EpochRelease(arm=arm, epoch=r, units=tuple(units), value=value)
        self.releases.append(rel)
        record_release(
            self.ledger,
            self.noise.event,
            label=f"{self.label} arm {arm} epoch {r} ({1 << r} obs)",
            round=int(units[-1]) if isinstance(units[-1], (int, np.integer)) else None,
            arm=arm,
            units=units,
        )
        return rel

    def push(self, arm: int, x: float, *, unit: Hashable | None = None) -> EpochRelease | None:
        """Buffer one observation of ``arm``; return the release if its epoch just filled."""
        us = None if unit is None else [unit]
        out = self.push_many(np.array([arm]), np.array([x], dtype=float), units=us)
        return out[0] if out else None

    def push_many(
        self, arms: object, xs: object, *, units: Iterable[Hashable] | None = None
    ) -> list[EpochRelease]:
        """Buffer observations in order (vectorised); return the releases, in order of the
        observation that completed them. ``units`` defaults to consecutive 1-based
        observation indices (continuing across calls)."""
        a = np.asarray(arms)
        x = np.asarray(xs, dtype=float)
        if a.ndim != 1 or x.shape != a.shape:
            raise ValueError(f"arms and xs must be 1-d of equal length, got {a.shape} and {x.shape}")
        if a.size and (not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= self.num_arms):
            raise ValueError(f"arms must be integers in [0, {self.num_arms}), got {a!r}")
        if not np.all(np.isfinite(x)):
            raise ValueError("xs must be finite")
        n = a.size
        u: list[Hashable]
        if units is None:
            u = list(range(self._count + 1, self._count + n + 1))
        else:
            u = list(units)
            if len(u) != n:
                raise ValueError(f"units must have {n} entries, got {len(u)}")
        self._count += n
        found: list[tuple[int, int, float, list[Hashable]]] = []  # (completing position, arm, sum, units)
        for arm in unique(a):
            arm = int(arm)
            idx = np.flatnonzero(a == arm)
            vals = x[idx]
            pos = 0
            while True:
                need = (1 << int(self.epoch[arm])) - int(self.pending[arm])
                if pos + need > idx.size:
                    break
                seg = slice(pos, pos + need)
                total = self._buf_sum[arm] + float(vals[seg].sum())
                seg_units = self._buf_units[arm] + [u[i] for i in idx[seg]]
                found.append((int(idx[pos + need - 1]), arm, total, seg_units))
                self._buf_sum[arm] = 0.0
                self._buf_units[arm] = []
                self.pending[arm] = 0
                pos += need
                self.epoch[arm] += 1  # provisional; restored below for in-order release
            rest = slice(pos, idx.size)
            self._buf_sum[arm] += float(vals[rest].sum())
            self._buf_units[arm].extend(u[i] for i in idx[rest])
            self.pending[arm] += idx.size - pos
        # release in the order in which the epochs completed
        for _, arm, _, _ in found:
            self.epoch[arm] -= 1
        found.sort(key=lambda f: f[0])
        return [self._release(arm, total, seg_units) for _, arm, total, seg_units in found]

    def privacy_loss(self, value: object, epoch_sum: float, epoch_sum_prime: float) -> np.ndarray:
        """Log density ratio of one released noisy epoch sum between two epoch sums."""
        return self.noise.log_ratio(np.asarray(value, dtype=float), epoch_sum, epoch_sum_prime, ())


# ---------------------------------------------------------------------------------------
# global epochs (full information)


def rnm_log_probability(winner: int, sums: object, scale: float) -> float:
    """``log P(argmax_j (s_j + Lap_j(scale)) = winner)`` (exact for K = 2, quadrature otherwise;
    see :func:`mechanisms.report_noisy_max.laplace_rnm_log_output_distribution`).

    >>> round(float(np.exp(rnm_log_probability(0, [0.0, 0.0], 1.0))), 6)
    0.5
    """
    s = np.asarray(sums, dtype=float)
    if s.ndim != 1 or s.size < 2:
        raise ValueError(f"sums must be a 1-d array with at least 2 entries, got shape {s.shape}")
    w = check_integer("winner", winner, 0)
    if w >= s.size:
        raise ValueError(f"winner must be in [0, {s.size}), got {winner}")
    return float(laplace_rnm_log_output_distribution(s, scale)[w])


def rnm_privacy_loss(winner: int, sums: object, sums_prime: object, scale: float) -> float:
    """``log P(winner | sums) − log P(winner | sums')`` for Laplace report-noisy-max."""
    return rnm_log_probability(winner, sums, scale) - rnm_log_probability(winner, sums_prime, scale)


class GlobalEpochSums:
    """Full-information global doubling epochs with RNM or noisy-sum releases.

    Args:
        num_actions: K.
        release: ``"argmax"`` (report-noisy-max of the epoch sums) or ``"sums"``.
        epsilon / noise_scale: exactly one; ``epsilon`` calibrates the Laplace scale so one
            epoch release is ε-DP (``2Δ/ε`` for replace RNM, ``Δ/ε`` for monotone add/remove
            RNM, ``KΔ/ε`` for the K noisy sums).
        sensitivity: Δ, how much one round can change one action's epoch sum (ℓ∞ over the
            actions; rewards in [0, 1] → 1).
        neighbouring, monotone: as in :class:`~dpaudit.events.LaplaceReportNoisyMaxEvent`.
        rng, size, ledger, label: as :class:`LazyEpochSums`.
    """

    def __init__(
        self,
        num_actions: int,
        *,
        release: Literal["argmax", "sums"] = "argmax",
        epsilon: float | None = None,
        noise_scale: float | None = None,
        sensitivity: float = 1.0,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
        monotone: bool = False,
        rng: np.random.Generator,
        size: int | tuple[int, ...] | None = None,
        ledger: Ledger | None = None,
        label: str = "global epoch",
    ) -> None:
        self.num_actions = check_integer("num_actions", num_actions, 2)
        if release not in ("argmax", "sums"):
            raise ValueError(f"release must be 'argmax' or 'sums', got {release!r}")
        self.release = release
        self.neighbouring = check_neighbouring(neighbouring)
        self.monotone = bool(monotone)
        K = self.num_actions
        if release == "argmax":
            factor = 1.0 if (self.monotone and self.neighbouring is Neighbouring.ADD_REMOVE) else 2.0
            self.noise = calibrate_noise("laplace", 1, sensitivity, epsilon, None, noise_scale)
            if epsilon is not None:
                self.noise = NodeNoise("laplace", factor * self.noise.scale, self.noise.sensitivity)
        else:
            self.noise = calibrate_noise("laplace", K, sensitivity, epsilon, None, noise_scale)
        self.sensitivity = self.noise.sensitivity
        self.rng = check_rng(rng)
        self.size = check_batch(size)
        self.ledger = _check_ledger(ledger)
        self.label = label
        self.epoch = 0
        self.t = 0  # rounds seen
        self._buf = np.zeros(K)
        self._buf_units: list[Hashable] = []
        self.current: np.ndarray | None = None
        self.releases: list[EpochRelease] = []

    @property
    def noise_scale(self) -> float:
        return self.noise.scale

    @property
    def event(self) -> PrivacyEvent:
        """The event of one epoch release."""
        if self.release == "argmax":
            return LaplaceReportNoisyMaxEvent(
                scale=self.noise.scale,
                num_candidates=self.num_actions,
                sensitivity=self.sensitivity,
                neighbouring=self.neighbouring,
                monotone=self.monotone,
            )
        return LaplaceEvent(scale=self.noise.scale, sensitivity=self.num_actions * self.sensitivity)

    @staticmethod
    def epoch_of(round_: int) -> int:
        """The epoch of 1-based round ``t``: ``⌊log₂ t⌋``."""
        return check_integer("round", round_).bit_length() - 1

    def push_many(self, X: object, *, units: Iterable[Hashable] | None = None) -> list[EpochRelease]:
        """Feed rounds' reward vectors ``X`` (shape ``(n, K)``) in order; return the epoch
        releases completed (the leader ``size``-array of ints, or noisy sums ``size + (K,)``).
        ``units`` defaults to the 1-based round indices."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.num_actions:
            raise ValueError(f"X must have shape (n, {self.num_actions}), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X must be finite")
        n = X.shape[0]
        u = list(range(self.t + 1, self.t + n + 1)) if units is None else list(units)
        if len(u) != n:
            raise ValueError(f"units must have {n} entries, got {len(u)}")
        out: list[EpochRelease] = []
        pos = 0
        while pos < n:
            end_round = (1 << (self.epoch + 1)) - 1  # last round of the current epoch
            take = min(end_round - self.t, n - pos)
            self._buf += X[pos : pos + take].sum(axis=0)
            self._buf_units.extend(u[pos : pos + take])
            self.t += take
            pos += take
            if self.t == end_round:
                out.append(self._release())
        return out

    def _release(self) -> EpochRelease:
        noisy = self._buf + self.noise.sample(self.rng, self.size + (self.num_actions,))
        value = np.argmax(noisy, axis=-1) if self.release == "argmax" else noisy
        rel = EpochRelease(arm=-1, epoch=self.epoch, units=tuple(self._buf_units), value=value)
        self.releases.append(rel)
        self.current = value
        record_release(
            self.ledger,
            self.event,
            label=f"{self.label} {self.epoch} ({1 << self.epoch} rounds, {self.release})",
            round=self.t,
            units=self._buf_units,
        )
        self.epoch += 1
        self._buf = np.zeros(self.num_actions)
        self._buf_units = []
        return rel
