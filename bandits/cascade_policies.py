"""Seed 001's cascading bandits as policies: what each algorithm is, releases and declares.

Wang, Dong, Wang, Li & Shao, *Cascading Bandit under Differential Privacy* (digest
``shared/notes/seed-001.md``). Each round t a user browses an ordered list ``A_t`` of K of the
L items and clicks the first attractive one; the unit of privacy is **one user — one round's
attraction vector, replaced** (Definition 1, event level). Rounds are 0-based here; the paper's
round index (its ``log t``) is the simulation round plus 1, or the simulation round itself with
the paper's initialisation (round 0 is then the round that observes ``w_0``).

=====================  ==========================================================  ==================
policy                 the algorithm                                                as written?
=====================  ==========================================================  ==================
:class:`CascadeUCB1`   CascadeUCB1 (Kveton et al. 2015a), the non-private reference  skeleton inferred
:class:`CascadeDP`     Alg. 1: one hybrid counter per item (ε/L each), index
                       ŵ + sqrt(1.5 log t/T) + 3c₁L log^{1.5}n log t/(εT)           yes (c₁ fitted)
:class:`CascadeLDP`    Alg. 2 (Lap(K/ε) per examined position), Alg. 3 (N(0, σ²),
                       σ = sqrt(2K ln(1.25/δ))/ε), Theorem 7 (Lap(sqrt(4K ln(e+ε/δ))/ε))   yes
:class:`CascadeLDPFixed`  sound LDP variant: every user sends K values 1{C = k} +
                       noise (Δ₁ = 2, Δ₂ = √2); noisy clicks / noisy examinations      not in the paper
:class:`CascadeDPCounts`  sound central variant: one time-indexed hybrid counter of
                       every item's click and examination (Δ₁ = K + 1)                not in the paper
=====================  ==========================================================  ==================

**What holds** (the declarations; digest §5):

* Algorithms 2, 3 and the Theorem 7 variant send one value per *examined* position, so the
  **number of values is the click position** (I1): for K ≥ 2 not (ε, δ)-LDP for any δ < 1. The
  declaration composes a ``NonPrivateEvent`` with the paper's own accounting of the noise
  (K Laplace values of sensitivity 1; the K-vector Gaussian with Δ₂ = √K); the published claim
  rides along and the run reports "NOT PRIVATE as certified".
* Algorithm 1's index divides by the un-noised counts ``T_{t−1}(e)`` and adds a bonus in them:
  which items were examined (the click) reaches the list sequence outside the hybrid counters,
  which Lemma 2's post-processing does not cover (I1) — a ``NonPrivateEvent``; each insertion
  into an item's counter is recorded as the counter's per-element guarantee ε/L.
* The paper's initialisation observes the whole vector ``w_0`` un-noised (I2): user 0 is not
  protected (``init="paper"``; ``init="none"`` starts from empty statistics with an infinite
  index instead, a legal initialisation).
* The sound variants certify what they claim: :class:`CascadeLDPFixed` ε (Laplace, Δ₁ = 2) or
  GDP μ = Δ₂/σ; :class:`CascadeDPCounts` ε by the hybrid counter (one element per round).

``noise_factor`` multiplies every noise scale (§7: "all noises are multiplied by 0.01") and
``factor_on`` says whether the privacy part of the bonus is multiplied too
(``"noise-and-bonus"``, the reading under which the published curves can look logarithmic —
digest §4) or not (``"noise"``). The privacy spent is the declaration's at the scaled noise: for
Algorithm 2's noise ε/factor (100ε at × 0.01).

Example:
    >>> from bandits.cascade_env import cascade_instance
    >>> from dpaudit.accounting import account
    >>> env = cascade_instance()
    >>> d = CascadeLDP(1.0, "laplace").declare(10**5, env.n_arms, env.structure)
    >>> account(d.event, delta=1e-6).best.value is None                 # the length leak
    True
    >>> f = CascadeLDPFixed(1.0, "laplace").declare(10**5, env.n_arms, env.structure)
    >>> account(f.event, delta=1e-6).bounds["basic"].value               # Lap(2/ε) on a one-hot
    1.0
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

from bandits.actions import ActionStructure, Feedback, Ranking
from bandits.cascade_theory import (
    NOISE_KINDS,
    alg1_bonus_coefficient,
    gaussian_sigma,
    laplace_scale,
    theorem7_scale,
)
from bandits.combinatorial import TIE_RULES
from bandits.policy import Agent, Policy, RunContext
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    ParallelEvent,
    PrivacyEvent,
    PureDpEvent,
    check_positive,
    check_probability,
)
from mechanisms.additive import AdditiveNoiseMechanism
from mechanisms.base import Norm
from mechanisms.gaussian import GaussianMechanism
from mechanisms.hybrid_batch import hybrid_unit_event
from mechanisms.laplace import LaplaceMechanism

__all__ = [
    "UNIT",
    "INIT_MODES",
    "FACTOR_TARGETS",
    "CALIBRATIONS",
    "C1",
    "LENGTH_LEAK",
    "COUNT_LEAK",
    "W0_LEAK",
    "CascadePolicy",
    "CascadeUCB1",
    "CascadeLDP",
    "CascadeLDPFixed",
    "CascadeDP",
    "CascadeDPCounts",
    "fixed_sensitivity",
    "counts_sensitivity",
]

UNIT = "one user (one round's attraction vector)"
INIT_MODES = ("paper", "none")
FACTOR_TARGETS = ("noise-and-bonus", "noise")
CALIBRATIONS = ("basic", "theorem7")
C1 = 2.7
"""Algorithm 1's constant c₁ (Lemma 1: the hybrid counter's error at n is at most
c₁ log^{1.5}n log(1/γ)/ε w.p. 1 − γ; the paper gives no value). 2.7 covers the Monte-Carlo
(1 − γ)-quantile of the counter's error for every n in [3, 10⁶] at γ = 10⁻² and 10⁻³ (largest
ratios 2.66 at n = 3 and 2.60 at n = 2²⁰ − 1; the bonus's γ = t⁻³ is below 10⁻² from t = 5 on).
It does not cover n = 2 (4.5) nor γ = 0.1 (3.24 at n = 2²⁰ − 1); tests/test_cascade.py."""

LENGTH_LEAK = (
    "the user sends one value per examined position, min(C_t, K) values: the number of values is the "
    "click position (seed 001 Algs. 2-3, digest I1)"
)
COUNT_LEAK = (
    "the un-noised observation counts T_t(e) (which items were examined, i.e. the click) enter the index "
    "outside the hybrid counters (seed 001 Alg. 1, digest I1)"
)
W0_LEAK = "the initial attraction vector w_0 of user 0 is used un-noised (seed 001 'Observe w_0', digest I2)"


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def _k(structure: ActionStructure | None) -> int:
    if not isinstance(structure, Ranking):
        raise ValueError("structure must be a Ranking(k): K sets the noise and the declaration")
    return structure.k


def fixed_sensitivity(k: int, noise: str) -> float:
    """Sensitivity of the fixed-length click report ``(1{C = k})_k``: one-hot or zero, so ℓ1 = 2
    and ℓ2 = √2 for K ≥ 2 (clicks at two positions), 1 for K = 1.

    >>> fixed_sensitivity(4, "laplace"), round(fixed_sensitivity(4, "gaussian"), 6)
    (2.0, 1.414214)
    >>> fixed_sensitivity(1, "laplace")
    1.0
    """
    if k <= 1:
        return 1.0
    return 2.0 if noise == "laplace" else math.sqrt(2.0)


def counts_sensitivity(k: int) -> float:
    """ℓ1 change of the leaf (clicks, examinations) of one user: clicks differ in ≤ 2 items, the
    examined prefix in ≤ K − 1 (C = 1 vs C = K): K + 1 for K ≥ 2, 1 for K = 1.

    >>> counts_sensitivity(4), counts_sensitivity(1)
    (5.0, 1.0)
    """
    return 1.0 if k <= 1 else float(k + 1)


@dataclass(frozen=True)
class CascadePolicy(Policy):
    """Shared configuration: ``init`` (``"paper"``: observe w₀; ``"none"``) and ``ties``
    (``"index"``: lower item first, the stable order of CascadeUCB1; ``"random"``)."""

    _: KW_ONLY
    init: str = "paper"
    ties: str = "index"

    feedback: ClassVar[Feedback] = Feedback.CASCADE
    structures: ClassVar[tuple[type[ActionStructure], ...]] = (Ranking,)
    label: ClassVar[str] = ""
    sound_init_only: ClassVar[bool] = False

    def __post_init__(self) -> None:
        _check_choice("init", self.init, INIT_MODES)
        _check_choice("ties", self.ties, TIE_RULES)
        if self.sound_init_only and self.init != "none":
            raise ValueError(f"init must be 'none' for {self.label} (w_0 would be an unprotected record)")

    @property
    def name(self) -> str:
        parts = self._parts()
        if self.init != "paper" and not self.sound_init_only:
            parts.append(f"init={self.init}")
        if self.ties != "index":
            parts.append(f"ties={self.ties}")
        return self.label + (f"({', '.join(parts)})" if parts else "")

    def _parts(self) -> list[str]:
        return []

    def stack_key(self) -> tuple:
        """Policies with equal keys can share one vectorised agent (per-row parameters)."""
        return (type(self), self.init, self.ties)

    def agent(self, run: RunContext) -> Agent:
        self.check_structure(run.structure)
        return self.agent_for_rows(run, [self] * run.reps)

    @abc.abstractmethod
    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        """One agent whose row r plays ``rows[r]`` (all with this policy's :meth:`stack_key`);
        ``record=False`` writes no ledger entries (stacked experiments: same actions)."""

    def _init_event(self, per_user: PrivacyEvent) -> PrivacyEvent:
        return ParallelEvent((per_user, NonPrivateEvent(W0_LEAK))) if self.init == "paper" else per_user


def _noise_fields(policy: CascadePolicy) -> None:
    object.__setattr__(policy, "epsilon", check_positive("epsilon", policy.epsilon))  # type: ignore[attr-defined]
    _check_choice("noise", policy.noise, NOISE_KINDS)  # type: ignore[attr-defined]
    check_probability("calibration_delta", policy.calibration_delta)  # type: ignore[attr-defined]
    check_positive("noise_factor", policy.noise_factor)  # type: ignore[attr-defined]
    _check_choice("factor_on", policy.factor_on, FACTOR_TARGETS)  # type: ignore[attr-defined]


def _factor_parts(policy: CascadePolicy) -> list[str]:
    f = policy.noise_factor  # type: ignore[attr-defined]
    if f == 1.0:
        return []
    return [f"noise x{f:g}" + (" (bonus too)" if policy.factor_on == "noise-and-bonus" else "")]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class CascadeUCB1(CascadePolicy):
    """CascadeUCB1 (Kveton et al. 2015a; digest §2.0): ``ŵ + sqrt(1.5 log t / T)``, exact means."""

    label: ClassVar[str] = "cascade-ucb"

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        from bandits.cascade_agents import UCBAgent

        return UCBAgent(run, rows, record=record)


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
                "seed 001, Theorem 5 (Algorithm 3)", epsilon=self.epsilon, delta=self.calibration_delta
            )
        if self.calibration == "theorem7":
            return PublishedClaim("seed 001, Theorem 7", epsilon=self.epsilon, delta=self.calibration_delta)
        return PublishedClaim("seed 001, Theorem 3 (Algorithm 2)", epsilon=self.epsilon)

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
        from bandits.cascade_agents import ObservedReportsAgent

        return ObservedReportsAgent(run, rows, record=record)


@dataclass(frozen=True)
class CascadeLDPFixed(CascadePolicy):
    """Sound LDP variant (not in the paper; digest I10): every user sends the K values
    ``1{C_t = k} + noise`` (one-hot or zero: Δ₁ = 2, Δ₂ = √2), whatever the click. The server no
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
    sound_init_only: ClassVar[bool] = True

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
            "the paper's budget (Theorem 3/5), met by this fixed-length variant",
            epsilon=self.epsilon,
            delta=None if self.noise == "laplace" else self.calibration_delta,
        )
        note = (
            f"each user sends K = {k} values 1{{C_t = k}} + noise once (one-hot or zero, sensitivity "
            f"{fixed_sensitivity(k, self.noise):.6g}), whatever the click"
        )
        return Declaration(ev, unit=UNIT, model="local", published=claim, note=note)

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        from bandits.cascade_agents import FixedReportsAgent

        return FixedReportsAgent(run, rows, record=record)


@dataclass(frozen=True)
class CascadeDP(CascadePolicy):
    """Algorithm 1 as written: one hybrid counter per item with ε' = ε/L fed ``w_t(e)`` when e is
    examined; ``ŵ(e) = (w_0(e) + S̃_e)/T_{t−1}(e)`` (the paper leaves ŵ undefined; digest's
    reading), index ``ŵ + sqrt(1.5 log t/T) + 3c₁L log^{1.5}n log t/(εT)`` with n the horizon."""

    epsilon: float = 1.0
    c1: float = C1
    noise_factor: float = 1.0
    factor_on: str = "noise-and-bonus"

    label: ClassVar[str] = "cascade-dp"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "c1", check_positive("c1", self.c1))
        check_positive("noise_factor", self.noise_factor)
        _check_choice("factor_on", self.factor_on, FACTOR_TARGETS)

    def _parts(self) -> list[str]:
        return (
            [f"eps={self.epsilon:g}"] + ([f"c1={self.c1:g}"] if self.c1 != C1 else []) + _factor_parts(self)
        )

    def counter_epsilon(self, n_items: int) -> float:
        """ε' = ε/L per item counter (§4: "equally distribute the privacy budget to all L arms")."""
        return self.epsilon / n_items

    def bonus_coefficient(self, n_items: int, horizon: int) -> float:
        """``3c₁L log^{1.5}n/ε`` (× factor with ``"noise-and-bonus"``)."""
        c = alg1_bonus_coefficient(self.epsilon, n_items, horizon, self.c1)
        return c * (self.noise_factor if self.factor_on == "noise-and-bonus" else 1.0)

    def insertion_event(self, n_items: int) -> PrivacyEvent:
        """The counter's per-element guarantee: ε'/factor (log node ε'/2 + ≤ k block nodes ε'/(2k))."""
        log_scale = (1 * 1.0 / (self.counter_epsilon(n_items) / 2)) * self.noise_factor
        return PureDpEvent(epsilon=2 * 1.0 / log_scale)

    def noise_event(self, k: int, n_items: int) -> PrivacyEvent:
        """The paper's accounting: ≤ K insertions (one per examined item), each ε'/factor."""
        return self.insertion_event(n_items).repeat(k)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        k = _k(structure)
        per_user = ComposedEvent((NonPrivateEvent(COUNT_LEAK), self.noise_event(k, n_arms)))
        note = (
            f"<= K = {k} insertions per user into per-item hybrid counters at eps' = eps/L = "
            f"{self.counter_epsilon(n_arms):.6g} (x{self.noise_factor:g} noise); the un-noised counts "
            "enter the index: not private" + ("; w_0 observed un-noised" if self.init == "paper" else "")
        )
        claim = PublishedClaim("seed 001, Theorem 1 (Algorithm 1)", epsilon=self.epsilon)
        return Declaration(self._init_event(per_user), unit=UNIT, model="central", published=claim, note=note)

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        from bandits.cascade_agents import HybridStreamsAgent

        return HybridStreamsAgent(run, rows, record=record)


@dataclass(frozen=True)
class CascadeDPCounts(CascadePolicy):
    """Sound central variant (not in the paper; digest I1): one hybrid counter, advanced every round,
    of the 2L-vector (clicks of every item, examinations of every item) — 0 for items not shown or
    not examined, so positions are public and the counts are private (ℓ1 sensitivity K + 1). Index
    ``S̃/N⁺ + sqrt(1.5 log t/N⁺) + 2λ_t/N⁺``, N⁺ = max(Ñ, 1), λ_t = sqrt(24 log t Σb²) the Lemma 6
    deviation of the counter's noise at t (Σb² over the nodes in its output); items never shown
    have an infinite index."""

    epsilon: float = 1.0
    noise_factor: float = 1.0
    factor_on: str = "noise-and-bonus"
    _: KW_ONLY
    init: str = "none"

    label: ClassVar[str] = "cascade-dp-counts"
    sound_init_only: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        check_positive("noise_factor", self.noise_factor)
        _check_choice("factor_on", self.factor_on, FACTOR_TARGETS)

    def _parts(self) -> list[str]:
        return [f"eps={self.epsilon:g}"] + _factor_parts(self)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        k = _k(structure)
        ev = hybrid_unit_event(self.epsilon, counts_sensitivity(k), horizon, self.noise_factor)
        note = (
            f"every user's leaf (clicks, examinations; l1 sensitivity {counts_sensitivity(k):g}) enters one "
            "log node Lap(2*Delta/eps) and <= k nodes Lap(2k*Delta/eps) of block k: eps by basic composition"
        )
        claim = PublishedClaim("the paper's budget (Theorem 1), met by this variant", epsilon=self.epsilon)
        return Declaration(ev, unit=UNIT, model="central", published=claim, note=note)

    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        from bandits.cascade_agents import HybridCountsAgent

        return HybridCountsAgent(run, rows, record=record)
