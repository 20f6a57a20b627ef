"""Algorithm 4 of Wang et al. (2021) (App. B): CUCB under local DP with Gaussian reports — a
subclass of the combinatorial semi-bandit layer of Chen et al. (2020)
(:mod:`bandits.semibandits.policies`).

Each user t reports the outcomes ``u_t(i)`` of the K base arms of the super arm it was shown, each
+ ``N(0, σ²)``, ``σ = sqrt(2K ln(1.25/δ))/ε`` (the Gaussian mechanism on the K-vector, Δ₂ = √K:
Theorem 8, (ε, δ)-LDP); the server keeps running means and plays ``S_t = Oracle(ū)`` with

    ū_i = û_i + sqrt(3 log t / (2T_i)) + (2/ε) sqrt(2K log(1.25/δ) log t / T_i)

(Alg. 4 line 5; the paper's typos "Oracle(ū_1..ū_K)" and "for e = 1..K" read as ū_1..ū_m and
e ∈ S_t). Readings of the CSB layer (documented there): ū is clipped to [0, 1]
(CUCB), ties in the oracle use the policy's random keys; the oracle is top-K on the scores, exact
for monotone symmetric rewards (the experiments' instance: the coverage reward of the cascade
instance, an assumption — the paper states no CUCB instance).

``init="paper"`` is Alg. 4's "Observe u_0; T_i ← 1; û(i) ← u_0(i)": round 0 plays the
data-independent super arm of equal scores and reads the whole outcome vector u₀ un-noised —
user 0 is not protected (a ``NonPrivateEvent``). ``init="none"`` is the CSB layer's
convention (an arm never updated has ū = 1), which certifies μ = √K/σ-GDP for every user.
Because the observed set is the played super arm (a function of past outputs), the counts are
public here and the report has a fixed length: no length leak (unlike Algorithms 1–3).

Example:
    >>> from bandits.environments.grammar import parse_combinatorial_env
    >>> from dpaudit.accounting import account
    >>> env = parse_combinatorial_env(DEFAULT_ENV)
    >>> pol = CUCBLDPGaussian(1.0, init="none")
    >>> round(pol.sigma(4), 6), round(account(pol.declare(1000, 20, env.structure).event, delta=1e-3).mu, 6)
    (7.552959, 0.264797)
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np

from bandits.actions import ActionStructure
from bandits.cascading.policies import FACTOR_TARGETS, INIT_MODES, UNIT
from bandits.cascading.theory import gaussian_sigma
from bandits.policy import Agent, Outcomes, RunContext
from bandits.semibandits.policies import RootBonusPolicy, _CSBAgent
from bandits.structures.combinatorial import problem
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import NonPrivateEvent, ParallelEvent
from dpaudit.papers import WANG_2021
from dpaudit.validation import check_positive, check_probability
from mechanisms.additive import AdditiveNoiseMechanism
from mechanisms.local import GaussianVectorRandomizer

__all__ = ["CUCBLDPGaussian", "DEFAULT_ENV", "U0_LEAK"]

DEFAULT_ENV = "topk:k=4,means=0.2x4/0.05x16,reward=coverage"
"""The cascade instance (L = 20, K = 4, p = 0.2, Δ = 0.15) as a semi-bandit with the coverage
reward 1 − Π(1 − u): an assumption (Figure 1(h)-(i) give no instance)."""

U0_LEAK = (
    "the initial outcome vector u_0 of user 0 is used un-noised (Wang et al. 2021, Alg. 4 'Observe u_0')"
)


@dataclass(frozen=True)
class CUCBLDPGaussian(RootBonusPolicy):
    """Algorithm 4 (module docstring): ``epsilon``, the calibration δ, the experiments' noise
    factor (and whether the privacy bonus is scaled too), the initialisation."""

    epsilon: float = 1.0
    calibration_delta: float = 1e-3
    noise_factor: float = 1.0
    factor_on: str = "noise-and-bonus"
    _: KW_ONLY
    init: str = "paper"

    label: ClassVar[str] = "cucb-ldp-gaussian"
    theorem: ClassVar[str] = "Theorem 8"
    report: ClassVar[str] = "all"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_probability("calibration_delta", self.calibration_delta)
        check_positive("noise_factor", self.noise_factor)
        if self.factor_on not in FACTOR_TARGETS:
            raise ValueError(f"factor_on must be one of {FACTOR_TARGETS}, got {self.factor_on!r}")
        if self.init not in INIT_MODES:
            raise ValueError(f"init must be one of {INIT_MODES}, got {self.init!r}")

    def _extra(self) -> list[str]:
        out = [] if self.init == "paper" else [f"init={self.init}"]
        if self.noise_factor != 1.0:
            out.append(
                f"noise x{self.noise_factor:g}"
                + (" (bonus too)" if self.factor_on == "noise-and-bonus" else "")
            )
        return out

    def sigma(self, k: int) -> float:
        """The paper's σ = sqrt(2K ln(1.25/δ))/ε."""
        return gaussian_sigma(self.epsilon, self.calibration_delta, k)

    def randomizer(self, k: int) -> GaussianVectorRandomizer:
        """The user's K outcomes in [0, 1]^K + N(0, (factor·σ)² I), Δ₂ = √K."""
        return GaussianVectorRandomizer(
            sigma=self.noise_factor * self.sigma(k), sensitivity=math.sqrt(k), domain=(0.0, 1.0)
        )

    def report_mechanism(self, k: int) -> AdditiveNoiseMechanism:
        return self.randomizer(k).mechanism(k)

    def coefficient(self, t: int, horizon: int, m: int, k: int) -> float:
        lt = math.log(t)
        bf = self.noise_factor if self.factor_on == "noise-and-bonus" else 1.0
        privacy = 2.0 / self.epsilon * math.sqrt(2.0 * k * math.log(1.25 / self.calibration_delta) * lt)
        return math.sqrt(1.5 * lt) + bf * privacy

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        if structure is None:
            raise ValueError("structure is needed: K sets the report's sensitivity")
        k = problem(structure).k
        ev = self.randomizer(k).event
        event = ParallelEvent((ev, NonPrivateEvent(U0_LEAK))) if self.init == "paper" else ev
        note = (
            f"each user sends its K = {k} outcomes + N(0, sigma^2), "
            f"sigma = {self.noise_factor * self.sigma(k):.6g} "
            "(l2 sensitivity sqrt(K)) once"
            + ("; u_0 observed un-noised (user 0 unprotected)" if self.init == "paper" else "")
        )
        claim = PublishedClaim(
            WANG_2021, "Theorem 8 (Algorithm 4)", epsilon=self.epsilon, delta=self.calibration_delta
        )
        return Declaration(event, unit=UNIT, model="local", published=claim, note=note)

    def agent(self, run: RunContext) -> Agent:
        self.check_structure(run.structure)
        return _Alg4Agent(self, run)


class _Alg4Agent(_CSBAgent):
    """The CSB agent with Algorithm 4's initial round (``init="paper"``)."""

    def __init__(self, policy: CUCBLDPGaussian, run: RunContext) -> None:
        super().__init__(policy, run)
        self.alg4 = policy
        self.capture_round: int | None = None
        self.captured: np.ndarray | None = None

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        if t0 != 0 or self.alg4.init != "paper":
            return super().run_chunk(t0, t1, outcomes)
        self.prepare(0, 1)
        first = self.select(0)  # every ū is 1: the oracle's data-independent tie rule
        u0 = np.clip(np.asarray(outcomes.table[:, 0], dtype=float), 0.0, 1.0)
        self.mu[:] = u0
        self.n[:] = 1
        if self.capture_round == 0:
            self.captured = u0.copy()
        self.run.ledgers.record(self.rows, NonPrivateEvent(U0_LEAK), units=range(0, 1), label="u_0")
        head = first[:, None, :]
        if t1 == 1:
            return head
        rest = super().run_chunk(1, t1, Outcomes(outcomes.table[:, 1:], outcomes.feedback))
        return np.concatenate([head, rest], axis=1)
