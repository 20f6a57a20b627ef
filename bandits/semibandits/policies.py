"""(Locally) differentially private combinatorial semi-bandits — CUCB-LDP1, CUCB-LDP2, CUCB-DP
(Chen, Zheng, Zhou, Yang, Chen & Wang, *(Locally) Differentially Private Combinatorial
Semi-Bandits*, ICML 2020) — and the non-private CUCB (Chen, Wang, Yuan & Wang 2016).

Every round t = 1..T a new user arrives; the server computes UCBs ``μ̄ = min(μ̃ + bonus, 1)``
(a never-updated arm has bonus +∞, footnote 3, so μ̄ = 1), plays ``S_t = Oracle(μ̄)`` (top-k,
greedy basis or explicit list — :func:`bandits.structures.combinatorial.problem`; exact, α = 1) and the
user reports. T (the horizon) enters every bonus, so none of these algorithms is anytime.

==============  =====================================================  ==========================
algorithm       bonus of arm i after n updates (as written)            report of user t
==============  =====================================================  ==========================
CUCB-LDP1       4·sqrt(2K ln T / (ε² n))   (``bonus="literal"``)        X_{t,i} + Lap(K/ε), i ∈ S_t
(Alg. 1)        4·sqrt(2K² ln T / (ε² n))  (``bonus="k-corrected"``,
                matches the noise's sd and Theorem 2's K²)
CUCB-LDP2       4·sqrt(2 ln T / (ε² n))                                X_{t,I_t} + Lap(1/ε),
(Alg. 2)                                                               I_t = argmin_{i∈S_t} T_i
CUCB-DP         sqrt(4 ln(mT)/n) + 12 K ln³T / (n ε)                   X_t ⊙ 1[S_t] to a trusted
(Alg. 3)                                                               server: tree aggregation,
                                                                       Lap(b) per node and
                                                                       coordinate, b = 2K log T/ε
CUCB            sqrt(3 ln t / (2n))  (Chen et al. 2016; the paper      X_{t,i}, i ∈ S_t
                only names it)
==============  =====================================================  ==========================

Implementation choices (each a documented deviation or reading where the paper is silent): μ̄ is also
clipped below at 0 (line 5, "if μ̄ ≥ 0 else any S": raising negative values to 0 keeps
optimism); ties in the oracle are broken by ``ties`` (``"random"``: uniform among tied arms,
from the policy's own randomness — data-independent; ``"index"``: lower index); ties in
``argmin T`` go to the lower arm index (a public rule, :class:`~mechanisms.local.
LeastPulledLaplaceRandomizer`); in Alg. 3 the counter is incremented before dividing
(line 7). ``bonus_scale`` multiplies the LDP bonuses, and CUCB-DP's privacy term
12K ln³T/(nε) only: 1 is the paper; CUCB-DP with the paper's constants never leaves the all-ones
UCB state at practical horizons (tested), so :data:`SCALED_DP_BONUS` = 1/30 — about
3 standard deviations of the tree noise at T = 10⁵ — is the documented scaled-down variant.

**Privacy** (unit: one user = one round's outcome vector, replace-one).

* LDP (Theorems 1, 3): each user sends one Laplace report, once; choosing S_t (and I_t) uses
  only other users' reports and public counts. CUCB-LDP1's report has ℓ1 sensitivity K (K
  coordinates in [0, 1]) at scale K/ε; CUCB-LDP2's one coordinate has sensitivity 1 at scale
  1/ε: ε per user, recorded per user (round) in its ledger.
* DP (Theorem 7): the user's leaf (ℓ1 sensitivity K) enters exactly ``⌈log₂T⌉ + 1`` released
  nodes (full padded tree, :class:`~mechanisms.continual.tree_batch.BatchTreeSums`), so ε_used =
  (⌈log₂T⌉ + 1)·K/b = ε·(⌈log₂T⌉ + 1)/(2 log T) by basic composition. With ``log_base="2"``
  this is ≤ ε for T ≥ 2 (0.54ε at T = 10⁵); with ``"e"`` it exceeds ε for T < 8 (1.24ε at
  T = 5); with the literal Lemma 1 scale (``noise_factor=1``, b = K log T/ε) it is
  ε(1 + 1/log₂T) > ε. The accountant certifies ε_used; the report flags the paper's ε as not
  certified there.

Example:
    >>> from bandits.environments.grammar import parse_combinatorial_env
    >>> env = parse_combinatorial_env("topk:k=2,means=0.5x8/0.7x2,reward=min")
    >>> from dpaudit.accounting import account
    >>> d = CUCBDP(1.0, log_base="e").declare(5, env.n_arms, env.structure)
    >>> round(account(d.event, delta=1e-6).bounds["basic"].value, 4)   # 4 levels·K/b at T = 5
    1.2427
    >>> round(tree_epsilon(10**5, 5, 1.0, "2"), 4)
    0.5419
"""

from __future__ import annotations

import abc
import math
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np

from bandits.actions import ActionStructure, Feedback
from bandits.engine import compiled
from bandits.policy import Agent, Outcomes, RunContext
from bandits.policy import Policy as _Policy
from bandits.semibandits import tree_engine
from bandits.structures.combinatorial import COMBINATORIAL, TIE_RULES, problem
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.papers import CHEN_2020
from dpaudit.validation import check_integer, check_positive
from mechanisms.additive import AdditiveNoiseMechanism
from mechanisms.continual.tree import tree_levels
from mechanisms.continual.tree_batch import BatchTreeSums
from mechanisms.laplace import LaplaceMechanism
from mechanisms.local import LaplaceVectorRandomizer, LeastPulledLaplaceRandomizer

__all__ = [
    "UNIT",
    "SCALED_DP_BONUS",
    "CSBPolicy",
    "CUCB",
    "CUCBLDP1",
    "CUCBLDP2",
    "CUCBDP",
    "tree_node_scale",
    "tree_epsilon",
    "dp_saturation_count",
]

UNIT = "one user (one round's outcome vector)"
SCALED_DP_BONUS = 1.0 / 30.0
"""The documented scaled-down CUCB-DP variant: its privacy term 12K ln³T/(nε) is about 95 tree-noise
standard deviations at T = 10⁵; ×1/30 leaves about 3."""


def _log(x: float, base: str) -> float:
    if base == "2":
        return math.log2(x)
    if base == "e":
        return math.log(x)
    raise ValueError(f"log_base must be '2' or 'e', got {base!r}")


def tree_node_scale(
    horizon: int, k: int, epsilon: float, log_base: str = "2", noise_factor: float = 2.0
) -> float:
    """Per-node Laplace scale of Algorithm 3: b = noise_factor·K·log T/ε (2: Alg. 3; 1: Lemma 1).

    >>> round(tree_node_scale(10**5, 5, 1.0), 1)
    166.1
    """
    T = check_integer("horizon", horizon, 2)
    return noise_factor * check_integer("k", k) * _log(T, log_base) / check_positive("epsilon", epsilon)


def tree_epsilon(
    horizon: int, k: int, epsilon: float, log_base: str = "2", noise_factor: float = 2.0
) -> float:
    """ε_used = (⌈log₂T⌉ + 1)·K/b per user (basic composition over the tree's levels)."""
    b = tree_node_scale(horizon, k, epsilon, log_base, noise_factor)
    return tree_levels(horizon, padded=True) * k / b


def dp_saturation_count(horizon: int, m: int, k: int, epsilon: float, scale: float = 1.0) -> float:
    """The number n of updates below which CUCB-DP's bonus alone is ≥ 1 (so μ̄ = 1 whatever the
    estimate ≥ 0): the root of sqrt(4 ln(mT)/n) + scale·12K ln³T/(nε) = 1.

    >>> round(dp_saturation_count(10**5, 20, 5, 1.0))   # m = 20, K = 5: about 9.4·10⁴
    93895
    """
    T = check_integer("horizon", horizon, 2)
    a = math.sqrt(4 * math.log(check_integer("m", m) * T))
    c = scale * 12 * check_integer("k", k) * math.log(T) ** 3 / check_positive("epsilon", epsilon)
    # sqrt(n) = x solves x² − a x − c = 0
    x = (a + math.sqrt(a * a + 4 * c)) / 2
    return x * x


@dataclass(frozen=True)
class CSBPolicy(_Policy):
    """Shared configuration (module docstring): ``ties`` and ``bonus_scale``."""

    _: KW_ONLY
    ties: str = "random"
    bonus_scale: float = 1.0

    feedback: ClassVar[Feedback] = Feedback.SEMI_BANDIT
    structures: ClassVar[tuple[type[ActionStructure], ...]] = COMBINATORIAL
    label: ClassVar[str] = ""
    theorem: ClassVar[str] = ""
    report: ClassVar[str] = "none"
    """What each user sends: ``"none"`` (raw outcomes to a trusted server), ``"all"`` (every outcome
    of S_t through :meth:`report_mechanism`) or ``"least-pulled"`` (one outcome)."""

    def report_mechanism(self, k: int) -> AdditiveNoiseMechanism | None:
        """The local randomizer's additive-noise mechanism for reports of ``k`` (``"all"``) or 1
        values; subclasses with other noise (e.g. Gaussian LDP) override it and :meth:`declare`."""
        return None

    def __post_init__(self) -> None:
        if self.ties not in TIE_RULES:
            raise ValueError(f"ties must be one of {TIE_RULES}, got {self.ties!r}")
        object.__setattr__(self, "bonus_scale", check_positive("bonus_scale", self.bonus_scale))
        eps = getattr(self, "epsilon", None)
        if eps is not None:
            object.__setattr__(self, "epsilon", check_positive("epsilon", eps))

    def _extra(self) -> list[str]:
        return []

    @property
    def name(self) -> str:
        parts = ([f"eps={self.epsilon:g}"] if hasattr(self, "epsilon") else []) + self._extra()
        parts += [f"bonus x{self.bonus_scale:.4g}"] if self.bonus_scale != 1.0 else []
        parts += [f"ties={self.ties}"] if self.ties != "random" else []
        return self.label + (f"({', '.join(parts)})" if parts else "")

    @abc.abstractmethod
    def bonus(self, n: np.ndarray, t: int, horizon: int, m: int, k: int) -> np.ndarray:
        """The exploration bonus of arms with ``n`` updates at 1-based round ``t`` (+inf at n = 0)."""

    def agent(self, run: RunContext) -> Agent:
        self.check_structure(run.structure)
        return _CSBAgent(self, run)

    def _claim(self) -> PublishedClaim:
        eps = getattr(self, "epsilon", None)  # the private variants' field
        if eps is None:
            raise ValueError(f"{self.name} is not private: it makes no published claim")
        return PublishedClaim(CHEN_2020, self.theorem, epsilon=float(eps))


def _per(c: float, n: np.ndarray, power: float) -> np.ndarray:
    """``c / n**power`` (power 0.5: ``c / sqrt(n)``) where n > 0, +inf where n = 0 (Chen et al.
    2020, footnote 3)."""
    d = np.sqrt(np.maximum(n, 1)) if power == 0.5 else np.maximum(n, 1) ** power
    return np.where(n > 0, c / d, np.inf)


class RootBonusPolicy(CSBPolicy):
    """A bonus ``c/sqrt(n)`` with ``c`` from :meth:`coefficient` (CUCB and the LDP algorithms)."""

    @abc.abstractmethod
    def coefficient(self, t: int, horizon: int, m: int, k: int) -> float:
        """``c`` of the bonus at 1-based round ``t``."""

    def bonus(self, n: np.ndarray, t: int, horizon: int, m: int, k: int) -> np.ndarray:
        return _per(self.coefficient(t, horizon, m, k), n, 0.5)


@dataclass(frozen=True)
class CUCB(RootBonusPolicy):
    """Non-private CUCB (Chen et al. 2016): bonus sqrt(3 ln t/(2n))."""

    label: ClassVar[str] = "cucb"

    def coefficient(self, t: int, horizon: int, m: int, k: int) -> float:
        return self.bonus_scale * math.sqrt(1.5 * math.log(t))


@dataclass(frozen=True)
class CUCBLDP1(RootBonusPolicy):
    """CUCB-LDP1 (Chen et al. 2020, Algorithm 1): every user sends its |S_t| outcomes + Lap(K/ε)."""

    epsilon: float = 1.0
    bonus_rule: str = "literal"
    label: ClassVar[str] = "cucb-ldp1"
    release_trials: ClassVar[int] = 2  # a report is K coordinates at eps/K each: its leak is spread
    theorem: ClassVar[str] = "Theorem 1"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.bonus_rule not in ("literal", "k-corrected"):
            raise ValueError(f"bonus_rule must be 'literal' or 'k-corrected', got {self.bonus_rule!r}")

    def _extra(self) -> list[str]:
        return [] if self.bonus_rule == "literal" else ["k-corrected bonus"]

    def coefficient(self, t: int, horizon: int, m: int, k: int) -> float:
        kk = k if self.bonus_rule == "literal" else k * k
        return self.bonus_scale * 4.0 * math.sqrt(2.0 * kk * math.log(horizon)) / self.epsilon

    report: ClassVar[str] = "all"

    def randomizer(self, k: int) -> LaplaceVectorRandomizer:
        return LaplaceVectorRandomizer.from_epsilon(self.epsilon, sensitivity=float(k), domain=(0.0, 1.0))

    def report_mechanism(self, k: int) -> AdditiveNoiseMechanism:
        return self.randomizer(k).mechanism(k)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        if structure is None:
            raise ValueError("structure is needed: K sets the report's sensitivity")
        k = problem(structure).k
        return Declaration(
            self.randomizer(k).event,
            unit=UNIT,
            model="local",
            published=self._claim(),
            note=f"each user sends its K = {k} outcomes in [0, 1] + Lap(K/eps) once: "
            "l1 sensitivity K, eps-LDP",
        )


@dataclass(frozen=True)
class CUCBLDP2(RootBonusPolicy):
    """CUCB-LDP2 (Chen et al. 2020, Algorithm 2): every user sends X_{t,I_t} + Lap(1/ε), I_t least pulled."""

    epsilon: float = 1.0
    label: ClassVar[str] = "cucb-ldp2"
    theorem: ClassVar[str] = "Theorem 3"

    def coefficient(self, t: int, horizon: int, m: int, k: int) -> float:
        return self.bonus_scale * 4.0 * math.sqrt(2.0 * math.log(horizon)) / self.epsilon

    report: ClassVar[str] = "least-pulled"

    def randomizer(self) -> LeastPulledLaplaceRandomizer:
        return LeastPulledLaplaceRandomizer.from_epsilon(self.epsilon)

    def report_mechanism(self, k: int) -> AdditiveNoiseMechanism:
        rz = self.randomizer()
        return LaplaceMechanism(scale=rz.scale, sensitivity=rz.sensitivity)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        return Declaration(
            self.randomizer().event,
            unit=UNIT,
            model="local",
            published=self._claim(),
            note="each user sends one outcome in [0, 1] + Lap(1/eps) once (I_t from public counts): eps-LDP",
        )


@dataclass(frozen=True)
class CUCBDP(CSBPolicy):
    """CUCB-DP (Chen et al. 2020, Algorithm 3): tree-based aggregation, b = noise_factor·K·log T/ε."""

    epsilon: float = 1.0
    log_base: str = "2"
    noise_factor: float = 2.0
    label: ClassVar[str] = "cucb-dp"
    release_trials: ClassVar[int] = 4  # a user's row is in 6 tree nodes x K coordinates, each at eps/(6K)
    theorem: ClassVar[str] = "Theorem 7"

    def __post_init__(self) -> None:
        super().__post_init__()
        _log(2.0, self.log_base)
        object.__setattr__(self, "noise_factor", check_positive("noise_factor", self.noise_factor))

    def _extra(self) -> list[str]:
        out = [f"log base {self.log_base}"] if self.log_base != "2" else []
        return out + ([f"b = {self.noise_factor:g}K log T/eps"] if self.noise_factor != 2.0 else [])

    def linear_regret(self, horizon: int, env: Any) -> str | None:
        """Every UCB stays 1 while an arm has fewer than :func:`dp_saturation_count` updates; when
        that exceeds an arm's share of the run's updates (T·K/m), the oracle chooses among ties
        for the whole run."""
        m, k = env.n_arms, problem(env.structure).k
        needed = dp_saturation_count(horizon, m, k, self.epsilon, self.bonus_scale)
        share = horizon * k / m
        if needed <= share:
            return None
        return (
            f"with these constants every UCB stays 1 for the whole run: an arm needs {needed:,.0f} updates "
            f"before its bonus drops below 1, its share of the run is {share:,.0f} (T K/m), so the oracle "
            "breaks ties among all arms throughout (Chen et al. 2020's bonus 12K ln^3 T/(n eps); "
            "--bonus-scale lowers it)"
        )

    def bonus_coefficients(self, horizon: int, m: int, k: int) -> tuple[float, float]:
        """(a, p) of the bonus a/sqrt(n) + p/n: a = sqrt(4 ln(mT)), p = scale·12K ln³T/ε."""
        privacy = self.bonus_scale * 12.0 * k * math.log(horizon) ** 3 / self.epsilon
        return math.sqrt(4.0 * math.log(m * horizon)), privacy

    def bonus(self, n: np.ndarray, t: int, horizon: int, m: int, k: int) -> np.ndarray:
        root, privacy = self.bonus_coefficients(horizon, m, k)
        return _per(root, n, 0.5) + _per(privacy, n, 1.0)

    def node_scale(self, horizon: int, k: int) -> float:
        return tree_node_scale(horizon, k, self.epsilon, self.log_base, self.noise_factor)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        if structure is None:
            raise ValueError("structure is needed: K sets the leaves' sensitivity")
        k = problem(structure).k
        T = check_integer("horizon", horizon, 2)
        levels = tree_levels(T, padded=True)
        b = self.node_scale(T, k)
        from dpaudit.events import LaplaceEvent

        used = levels * k / b
        flag = (
            "" if used <= self.epsilon * (1 + 1e-12) else f"; this EXCEEDS the paper's eps = {self.epsilon:g}"
        )
        return Declaration(
            LaplaceEvent(scale=b, sensitivity=float(k)).repeat(levels),
            unit=UNIT,
            model="central",
            published=self._claim(),
            note=(
                f"each user's leaf (l1 sensitivity K = {k}) is in {levels} = ceil(log2 T) + 1 "
                "released tree nodes, "
                f"Lap(b) with b = {self.noise_factor:g}*K*log_{self.log_base}(T)/eps = {b:.6g}: "
                f"eps_used = {levels}*K/b = {used:.6g}{flag}"
            ),
        )


class _CSBAgent(Agent):
    def __init__(self, policy: CSBPolicy, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        self.problem = problem(run.structure)
        self.k = self.problem.k
        R, m = self.reps, self.n_arms
        self.mu = np.zeros((R, m))  # μ̃: running means of the (noisy) reports
        self.n = np.zeros((R, m), dtype=np.int64)  # T_{t,i}: updates per arm
        self.ucb = np.ones((R, m))  # μ̄ of the last round (for inspection)
        self._keys = run.random.child(0) if policy.ties == "random" else None
        self._k: np.ndarray | None = None
        self._z: np.ndarray | None = None
        self._t0 = 0
        self.tree: BatchTreeSums | None = None
        self.mech = policy.report_mechanism(self.k)
        if isinstance(policy, CUCBDP):
            self.tree = BatchTreeSums(
                R,
                self.horizon,
                m,
                noise_scale=policy.node_scale(self.horizon, self.k),
                sensitivity=float(self.k),
                noise=run.noise.child(0),
                ledgers=run.ledgers,
                label="cucb-dp tree",
            )
        self._noise = run.noise.child(1) if self.mech is not None else None

    def prepare(self, t0: int, t1: int) -> None:
        self._t0 = t0
        if self._keys is not None:
            self._k = self._keys.random((t1 - t0, self.n_arms))
        if self.mech is not None:  # standard draws of the mechanism's noise, one row per report
            width = self.k if self.policy.report == "all" else 1
            self._z = getattr(self._noise, self.mech.standard_noise)((t1 - t0, width))
        if self.tree is not None:
            self.tree.prepare(t0, t1)

    def _mode(self) -> int | None:
        """The compiled kernel's mode for this agent, or None (NumPy step loop)."""
        top_k = self.problem.matroid is None and self.problem.candidates is None
        if not top_k or self.tree is not None or not compiled.worth_compiling(self.reps * self.horizon):
            return None  # a short run keeps to the step loop: loading numba would cost more
        if self.run.ledgers.transcripts is not None:  # the kernel keeps no transcript (an audit)
            return None
        return {"none": 0, "all": 1, "least-pulled": 2}.get(self.policy.report)

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        """The compiled kernel of :mod:`bandits.engine.compiled` when numba is available, the run long
        enough to repay loading it and the problem top-k (identical actions, estimates and per-user
        charges; tested), else the step loop."""
        if tree_engine.applies(self):  # CUCB-DP: the compiled tree chunk (tested bit-identical)
            return tree_engine.play_chunk(self, t0, t1, outcomes)
        mode = self._mode()
        if mode is None:
            return super().run_chunk(t0, t1, outcomes)
        self.prepare(t0, t1)
        policy, mech = self.policy, self.mech
        if not isinstance(policy, RootBonusPolicy):  # pragma: no cover - _mode only for these
            raise TypeError(f"the compiled kernel needs a c/sqrt(n) bonus, not {type(policy).__name__}")
        coef = np.array([policy.coefficient(t + 1, self.horizon, self.n_arms, self.k) for t in range(t0, t1)])
        scale = getattr(mech, mech.noise_parameter) if mode and mech is not None else 0.0
        acts = compiled.csb_chunk(
            mode, self.mu, self.n, outcomes.table, self._k, self._z, coef, scale, self.k
        )
        if mode and mech is not None:  # one report per user and round (as release_batch records them)
            self.run.ledgers.record(self.rows, mech.event, units=range(t0, t1), label="report")
        return acts

    def select(self, t: int) -> np.ndarray:
        b = self.policy.bonus(self.n, t + 1, self.horizon, self.n_arms, self.k)
        self.ucb = np.clip(self.mu + b, 0.0, 1.0)
        keys = None if self._k is None else self._k[:, t - self._t0]
        return self.problem.oracle(self.ucb, keys)

    def update(self, t: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        x = np.clip(np.asarray(feedback, dtype=float), 0.0, 1.0)
        rows = self.rows
        pol, mech, z = self.policy, self.mech, self._z
        if pol.report == "least-pulled":
            assert mech is not None and z is not None  # a reporting policy has both (prepare)
            cnt = self.n[rows[:, None], actions]
            key = cnt * self.n_arms + actions  # argmin count, ties to the lower arm index (public)
            j = np.argmin(key, axis=1)
            arm = actions[rows, j]
            y = mech.release_batch(
                x[rows, j], z[:, t - self._t0, 0], self.run.ledgers, rows, round=t, label="report"
            )
            n = self.n[rows, arm] + 1
            self.mu[rows, arm] += (y - self.mu[rows, arm]) / n
            self.n[rows, arm] = n
            return
        if pol.report == "all":
            assert mech is not None and z is not None
            x = mech.release_batch(x, z[:, t - self._t0], self.run.ledgers, rows, round=t, label="report")
        r = rows[:, None]
        n = self.n[r, actions] + 1
        self.n[r, actions] = n
        if self.tree is not None:
            leaf = np.zeros((self.reps, self.n_arms))
            leaf[r, actions] = x
            prefix = self.tree.step(leaf)
            self.mu[r, actions] = prefix[r, actions] / n
        else:
            self.mu[r, actions] += (x - self.mu[r, actions]) / n

    def finish(self) -> None:
        if self.tree is not None:
            self.tree.close()
            self.tree.flush()
        super().finish()
