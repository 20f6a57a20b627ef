"""The cascading bandits under local DP: Algorithms 2, 3 and the Theorem 7 variant as written
(:class:`CascadeLDP`, one noisy value per *examined* position), and the sound fixed-length variant
(:class:`CascadeLDPFixed`, every user sends K values), each with its vectorised agent.
"""


from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np

from bandits.actions import ActionStructure
from bandits.cascading.base import (
    CALIBRATIONS,
    LENGTH_LEAK,
    UNIT,
    CascadeAgent,
    CascadePolicy,
    _check_choice,
    _factor_parts,
    _k,
    _noise_fields,
    fixed_sensitivity,
    repetition_table,
)
from bandits.cascading.theory import (
    gaussian_sigma,
    laplace_scale,
    theorem7_scale,
)
from bandits.policy import Agent, Outcomes, RunContext
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PrivacyEvent,
)
from dpaudit.papers import WANG_2021
from mechanisms.additive import AdditiveNoiseMechanism
from mechanisms.base import Norm
from mechanisms.gaussian import GaussianMechanism
from mechanisms.laplace import LaplaceMechanism
from mechanisms.row_reports import RowReports

__all__ = [
    "CascadeLDP",
    "CascadeLDPFixed",
    "ObservedReportsAgent",
    "FixedReportsAgent",
]


@dataclass(frozen=True)
class CascadeLDP(CascadePolicy):
    """Algorithms 2 (``noise="laplace"``), 3 (``"gaussian"``) and the Theorem 7 variant
    (``"laplace"``, ``calibration="theorem7"``) as written (module docstring)."""

    epsilon: float = 1.0
    noise: str = "laplace"
    calibration: str = "basic"
    calibration_delta: float = 1e-3
    noise_factor: float = 1.0
    factor_on: str = "noise-and-bonus"

    label: ClassVar[str] = "cascade-ldp"
    ledger_bytes_per_round = 24  # the observed reports (CascadePolicy)

    def __post_init__(self) -> None:
        super().__post_init__()
        _noise_fields(self)
        _check_choice("calibration", self.calibration, CALIBRATIONS)
        if self.calibration == "theorem7" and self.noise != "laplace":
            raise ValueError("calibration 'theorem7' applies to noise 'laplace' (the Theorem 7 variant)")

    def _parts(self) -> list[str]:
        out = [self.noise, f"eps={self.epsilon:g}"]
        if self.calibration != "basic":
            out.append("Theorem 7 calibration")
        return out + _factor_parts(self)

    def stack_key(self) -> tuple:
        return super().stack_key() + (self.noise,)

    def base_scale(self, k: int) -> float:
        """The paper's per-value scale: K/ε, sqrt(4K ln(e + ε/δ))/ε or σ = sqrt(2K ln(1.25/δ))/ε."""
        if self.noise == "gaussian":
            return gaussian_sigma(self.epsilon, self.calibration_delta, k)
        if self.calibration == "theorem7":
            return theorem7_scale(self.epsilon, self.calibration_delta, k)
        return laplace_scale(self.epsilon, k)

    def value_scale(self, k: int) -> float:
        """The scale each value really gets (× ``noise_factor``)."""
        return self.noise_factor * self.base_scale(k)

    def bonus_scale(self, k: int) -> float:
        """The scale in the privacy part of the bonus (× factor only with ``"noise-and-bonus"``)."""
        return self.value_scale(k) if self.factor_on == "noise-and-bonus" else self.base_scale(k)

    def value_mechanism(self, k: int) -> AdditiveNoiseMechanism:
        """One reported value (sensitivity 1)."""
        if self.noise == "laplace":
            return LaplaceMechanism(self.value_scale(k), 1.0)
        return GaussianMechanism(self.value_scale(k), 1.0)

    def noise_event(self, k: int) -> PrivacyEvent:
        """The paper's own accounting of one user's values (the length not counted): K Laplace values
        of sensitivity 1 (Theorems 3, 7), or the K-vector Gaussian with Δ₂ = √K (Theorem 5)."""
        if self.noise == "laplace":
            return LaplaceEvent(scale=self.value_scale(k), sensitivity=1.0).repeat(k)
        return GaussianEvent(sigma=self.value_scale(k), sensitivity=math.sqrt(k))

    def claim(self) -> PublishedClaim:
        if self.noise == "gaussian":
            return PublishedClaim(
                WANG_2021, "Theorem 5 (Algorithm 3)", epsilon=self.epsilon, delta=self.calibration_delta
            )
        if self.calibration == "theorem7":
            return PublishedClaim(WANG_2021, "Theorem 7", epsilon=self.epsilon, delta=self.calibration_delta)
        return PublishedClaim(WANG_2021, "Theorem 3 (Algorithm 2)", epsilon=self.epsilon)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        k = _k(structure)
        noise = self.noise_event(k)
        per_user = noise if k == 1 else ComposedEvent((NonPrivateEvent(LENGTH_LEAK), noise))
        note = (
            f"each user sends min(C_t, K) values 1{{C_t = k}} + noise at scale {self.value_scale(k):.6g}; "
            + (
                "K = 1: one value, no length leak"
                if k == 1
                else "the number of values is the click: not private"
            )
            + ("; w_0 observed un-noised (user 0 unprotected)" if self.init == "paper" else "")
        )
        return Declaration(
            self._init_event(per_user), unit=UNIT, model="local", published=self.claim(), note=note
        )

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:

        return ObservedReportsAgent(run, rows, record=record)

@dataclass(frozen=True)
class CascadeLDPFixed(CascadePolicy):
    """Sound LDP variant (not in the paper; the click vector is one-hot or zero): every user sends
    the K values ``1{C_t = k} + noise`` (one-hot or zero: Δ₁ = 2, Δ₂ = √2), whatever the click. The server no
    longer knows which positions were examined; it estimates, per item, the clicks
    ``S = Σ y_k`` and the examinations ``E = Σ (1 − Σ_{j<k} y_j)`` (unbiased: E[1 − Σ_{j<k}
    1{C = j}] = P(examined)) and plays ``S/E⁺ + sqrt(1.5 log t/E⁺) + dev/E⁺`` with E⁺ = max(E, 1)
    and dev the noise's deviation bound for Σ_i k_i noise terms (Lemma 6 for Laplace:
    b sqrt(24 P log t); Lemma 7 for Gaussian: σ sqrt(2 P log(2t³)); P = Σ of the 1-based
    positions the item was shown at); items never shown have an infinite index."""

    epsilon: float = 1.0
    noise: str = "laplace"
    calibration_delta: float = 1e-3
    noise_factor: float = 1.0
    factor_on: str = "noise-and-bonus"
    _: KW_ONLY
    init: str = "none"

    label: ClassVar[str] = "cascade-ldp-fixed"
    ledger_bytes_per_round = 12  # the fixed reports (CascadePolicy)
    sound_init_only: ClassVar[bool] = True
    release_trials: ClassVar[int] = 2  # a report's change moves two of its K coordinates

    def __post_init__(self) -> None:
        super().__post_init__()
        _noise_fields(self)

    def _parts(self) -> list[str]:
        return [self.noise, f"eps={self.epsilon:g}"] + _factor_parts(self)

    def stack_key(self) -> tuple:
        return super().stack_key() + (self.noise,)

    def base_scale(self, k: int) -> float:
        """Lap(Δ₁/ε), or the classical σ = Δ₂ sqrt(2 ln(1.25/δ))/ε (as Algorithm 3 calibrates)."""
        sens = fixed_sensitivity(k, self.noise)
        if self.noise == "laplace":
            return sens / self.epsilon
        return sens * math.sqrt(2.0 * math.log(1.25 / self.calibration_delta)) / self.epsilon

    def value_scale(self, k: int) -> float:
        return self.noise_factor * self.base_scale(k)

    def bonus_scale(self, k: int) -> float:
        return self.value_scale(k) if self.factor_on == "noise-and-bonus" else self.base_scale(k)

    def report_mechanism(self, k: int) -> AdditiveNoiseMechanism:
        """The K-vector report of one user."""
        sens = fixed_sensitivity(k, self.noise)
        if self.noise == "laplace":
            return LaplaceMechanism(self.value_scale(k), sens, Norm.L1, k)
        return GaussianMechanism(self.value_scale(k), sens, Norm.L2, k)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        k = _k(structure)
        ev = self.report_mechanism(k).event
        claim = PublishedClaim(
            WANG_2021,
            "Theorem 3/5's budget, met by this fixed-length variant",
            epsilon=self.epsilon,
            delta=None if self.noise == "laplace" else self.calibration_delta,
        )
        note = (
            f"each user sends K = {k} values 1{{C_t = k}} + noise once (one-hot or zero, sensitivity "
            f"{fixed_sensitivity(k, self.noise):.6g}), whatever the click"
        )
        return Declaration(ev, unit=UNIT, model="local", published=claim, note=note)

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:

        return FixedReportsAgent(run, rows, record=record)


class SentReports(RowReports):
    """:class:`~mechanisms.row_reports.RowReports` whose releases the compiled round loop can book
    a chunk at a time (:meth:`sent`)."""

    def sent(self, s0: int, masks: np.ndarray) -> None:
        """Book the rounds ``s0 .. s0 + n − 1`` as n calls of :meth:`release` would, given the
        slots each row sent (``masks``: (R, n, slots)). Only without kept transcripts (the
        values are not passed)."""
        if self.ledgers is None:
            return
        if self.ledgers.transcripts is not None:
            raise RuntimeError("transcripts are kept: release() each round's values")
        n = masks.shape[1]
        self._rounds.extend(range(s0, s0 + n))
        self._masks.extend(masks[:, i] for i in range(n))


class _ReportsAgent(CascadeAgent):
    """What the two LDP agents share: the users' reports (``reports``, a :class:`SentReports`
    built by the subclass), one standard draw per position and round, the bonus scale per row."""

    reports: SentReports
    replays = ((SentReports, "release", RowReports.release),)

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run, rows, record=record)
        self.noise = rows[0].noise  # type: ignore[attr-defined]
        self.noise_width = self.k
        self.noise_sampler = "laplace" if self.noise == "laplace" else "standard_normal"
        self.bonus = self._row_column([p.bonus_scale(self.k) for p in rows])  # type: ignore[attr-defined]

    def roots(self, ts: range | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``sqrt(1.5 log t)`` and the root of the privacy part, ``sqrt(24 log t)`` (Laplace,
        Lemma 6) or ``sqrt(2 log(2t³))`` (Gaussian, Lemma 7), of the paper rounds ``ts``."""
        lts = [math.log(t) for t in ts]
        a = np.array([math.sqrt(1.5 * lt) for lt in lts])
        if self.noise == "laplace":
            return a, np.array([math.sqrt(24.0 * lt) for lt in lts])
        return a, np.array([math.sqrt(2.0 * math.log(2.0 * float(t) ** 3)) for t in ts])

    def chunk_report_noise(self) -> np.ndarray:
        """``scale_row · standard draw`` of every slot, as :meth:`RowReports.release` adds it."""
        return self.reports.scale[:, None, None] * self.chunk_noise


class ObservedReportsAgent(_ReportsAgent):
    """Algorithms 2, 3 and the Theorem 7 variant: each examined position's ``1{C = k}`` + noise;
    ``ŵ ← (T ŵ + value)/(T + 1)`` (kept as the running sum S and the count T). Index: Alg. 2
    ``ŵ + sqrt(1.5 log t/T) + b sqrt(24 log t/T)`` (Lemma 6, γ = t⁻³), Alg. 3
    ``ŵ + sqrt(1.5 log t/T) + σ sqrt(2 log(2t³)/T)`` (Lemma 7, γ = t⁻³)."""

    compiled = "cascade_rounds"

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        pols: list[CascadeLDP] = [p for p in rows if isinstance(p, CascadeLDP)]
        if len(pols) != len(rows):
            raise ValueError("rows must be CascadeLDP policies")
        super().__init__(run, rows, record=record)
        self.reports = SentReports([p.value_mechanism(self.k) for p in pols], self.k, self.ledgers, "value")

    def chunk_coefficients(self, ts: range | Sequence[int]) -> np.ndarray:
        a, b = self.roots(ts)
        return a + self.bonus * b

    def compiled_releases(self, s0: int, clicks: np.ndarray) -> None:
        """The examined positions ``k ≤ C`` of each round are the values sent."""
        self.reports.sent(s0, self.positions[None, None, :] <= clicks[:, :, None])

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        y = self.reports.release(clicked.astype(float), self.chunk_noise[:, s - self._t0], examined, s)
        if self.capture_round == s:
            self.captured = np.where(examined, y, np.nan)
        self.S.reshape(-1)[flat] += np.where(examined, y, 0.0)
        self.T.reshape(-1)[flat] += examined
        self.refresh(flat)

    def end_chunk(self, t0: int, t1: int) -> None:
        self.reports.flush()
        if self.k >= 2:
            self._record_chunk(NonPrivateEvent(LENGTH_LEAK), t0, t1, "report length")


class FixedReportsAgent(_ReportsAgent):
    """The fixed-length LDP variant (:class:`~bandits.cascading.policies.CascadeLDPFixed`):
    ``U = S/E⁺ + sqrt(1.5 log t/E⁺) + dev/E⁺`` with dev = b sqrt(24 P log t) (Laplace) or
    σ sqrt(2 P log(2t³)) (Gaussian); cached as ``mean + sqrt(1.5 log t)·isq + c'_t·g2``,
    ``g2 = sqrt(P)/E⁺``."""

    compiled = "fixed_rounds"

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        pols: list[CascadeLDPFixed] = [p for p in rows if isinstance(p, CascadeLDPFixed)]
        if len(pols) != len(rows):
            raise ValueError("rows must be CascadeLDPFixed policies")
        super().__init__(run, rows, record=record)
        self.reports = SentReports([p.report_mechanism(self.k) for p in pols], 1, self.ledgers, "report")
        R, L = self.reps, self.n_arms
        self.E = np.zeros((R, L))  # noisy examinations
        self.D = np.zeros((R, L))  # displays (public: the lists are the output)
        self.P = np.zeros((R, L))  # sum of the 1-based positions shown at (public)
        self.g2 = np.zeros((R, L))  # sqrt(P) / max(E, 1)

    def index(self, t: int, s: int) -> np.ndarray:
        a, b = self.roots((t,))
        return self.mean + a[0] * self.isq + (self.bonus * b) * self.g2

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        y = self.reports.release(clicked.astype(float), self.chunk_noise[:, s - self._t0], None, s)
        if self.capture_round == s:
            self.captured = y.copy()
        above = np.concatenate([np.zeros((self.reps, 1)), np.cumsum(y, axis=1)[:, :-1]], axis=1)
        S, E, P = self.S.reshape(-1), self.E.reshape(-1), self.P.reshape(-1)
        S[flat] += y
        E[flat] += 1.0 - above
        self.D.reshape(-1)[flat] += 1.0
        P[flat] += self.positions + 1.0
        ep = np.maximum(E[flat], 1.0)
        self.mean.reshape(-1)[flat] = S[flat] / ep  # D > 0 now
        self.isq.reshape(-1)[flat] = 1.0 / np.sqrt(ep)
        self.g2.reshape(-1)[flat] = np.sqrt(P[flat]) / ep

    def _run_compiled(
        self, kernel: Any, t0: int, t1: int, start: int, outcomes: Outcomes, acts: np.ndarray
    ) -> None:
        """The chunk by :func:`bandits.cascading._kernel.fixed_rounds` (every user sends its K
        values: one report per round, booked per chunk)."""
        a, b = self.roots(range(t0 + self.offset, t1 + self.offset))
        kernel(
            repetition_table(outcomes), start - t0, a, self.bonus * b,
            self.chunk_report_noise(), self.S, self.E, self.D, self.P, self.mean, self.isq, self.g2, acts,
        )  # fmt: skip
        self.reports.sent(start, np.ones((self.reps, t1 - start, 1), dtype=bool))

    def end_chunk(self, t0: int, t1: int) -> None:
        self.reports.flush()
