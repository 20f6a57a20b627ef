"""The private baselines of Hu et al. (2024), §6, from their own papers: DP-SE and AdaP-UCB /
AdaP-KLUCB.

Hu et al. give no pseudocode for them; the equations used are stated here.

**DP-SE** (Sajed & Sheffet, ICML 2019, "An optimal private stochastic-MAB algorithm based on an
optimal private stopping rule", arXiv:1905.09383, Algorithm "DP-SE"). The original text was not
available to us; the constants below are those of the two public re-implementations we could
read (``achraf-azize/DP-BAI`` ``algorithms/dp_se.py``, by Azize & Basu's group, who ran DP-SE
as the baseline of Azize & Basu 2022 with β = 1/T; ``keirp/private-bandits``), which agree:

* epoch e = 1, 2, …, Δ_e = 2^{−e}, S = the arms not yet eliminated;
* R_e = ⌈max{32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e)}⌉ pulls of every arm of S
  (here in blocks, arm by arm in index order);
* private epoch means μ̃_i = (Σ of the epoch's R_e rewards + Lap(1/ε))/R_e
  (= the epoch mean + Lap(1/(εR_e)));
* h_e = sqrt(ln(8|S|e²/β)/(2R_e)), c_e = ln(4|S|e²/β)/(εR_e); eliminate every i with
  max_k μ̃_k − μ̃_i > 2(h_e + c_e);
* when one arm is left, play it to the end. β is the failure probability; it needs T when
  β = 1/T (the default, as in Azize & Basu's experiments and Figure 5 of Ou, Avella Medina & Cummings 2024).

Privacy: each reward is in exactly one epoch mean, released once with Lap(1/(εR_e)) on a mean of
R_e values in [0, 1] → ε-DP per reward (parallel composition over epochs and arms).

**AdaP-UCB / AdaP-KLUCB** (Azize & Basu, NeurIPS 2022, "When privacy meets partial information:
a refined analysis of differentially private bandits", Algorithm 1 and eq. (7)):

* play each arm once; then for episodes ℓ = 1, 2, …: at t_ℓ (1-based round), choose
  A_ℓ = argmax_a I_a(t_ℓ − 1, α) and play it until its count doubles, T_a(t) = 2T_a(t_ℓ − 1);
* private mean of arm a: the mean of its **last episode** only, plus Lap(1/(ε m_a)), where
  m_a is that episode's length (½N_a(t_ℓ − 1) in the paper; 1 for the initial pull, where the
  paper's ½N_a would be ½ — we use the real episode length, which keeps Lemma 1's ε);
* AdaP-UCB: I = μ̃ + sqrt(α ln(2t_ℓ)/(2 m_a)) + α ln(t_ℓ)/(ε m_a)  (eq. 7);
* AdaP-KLUCB: μ̆ = Clip[0,1](μ̃ + α ln(t_ℓ)/(ε m_a)),
  I = max{q ∈ [μ̆, 1] : kl(μ̆, q) ≤ α ln(t_ℓ)/m_a}, kl the Bernoulli KL divergence, solved by
  bisection with 50 halvings of [μ̆, 1] (bracket < 1e-15; the returned q is the lower end, so
  kl(μ̆, q) ≤ α ln(t_ℓ)/m_a holds exactly as computed);
* α = 3.1 (> 3, as in their experiments). Privacy (their Theorem 6): each reward is in one
  episode mean → ε-DP per reward.

Ties (probability 0 with continuous noise) go to the lowest index.

Example:
    >>> DPSE(epsilon=1.0, beta=1e-6).epoch_length(1, 5)
    2241
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> r = simulate(AdaP(epsilon=1.0), BernoulliEnv((0.9, 0.1)), 200, 2, record_actions=True, progress=False)
    >>> r.actions[0, :2].tolist()
    [0, 1]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.actions import ActionStructure, Feedback
from bandits.engine.segments import SegmentAgent
from bandits.lazy.policies import UNIT as LAZY_UNIT
from bandits.policy import Policy, RunContext
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import Neighbouring
from dpaudit.papers import AZIZE_BASU_2022, SAJED_SHEFFET_2019
from dpaudit.validation import check_positive, check_probability
from mechanisms.laplace import LaplaceMechanism

__all__ = ["DPSE", "AdaP", "kl_bernoulli", "klucb_upper"]

UNIT = LAZY_UNIT
"""The unit of Hu et al. (2024) (Definition 1), which is the baselines' "one reward" under bandit feedback:
the agent reads one coordinate of round t's vector, the reward of the arm it pulls, so replacing
the vector changes at most that one observed reward, and replacing one observed reward is such a
replacement. The ledger's units are rounds."""
KL_HALVINGS = 50


def kl_bernoulli(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """kl(p, q) = p ln(p/q) + (1 − p) ln((1 − p)/(1 − q)), with 0 ln 0 = 0 (inf where q hits 0/1
    while p does not).

    >>> float(kl_bernoulli(np.array(0.5), np.array(0.5)))
    0.0
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _xlogy(p, p) - _xlogy(p, q) + _xlogy(1 - p, 1 - p) - _xlogy(1 - p, 1 - q)


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x·ln y, 0 where x = 0 (``scipy.special.xlogy``, without loading SciPy for a small run)."""
    return np.where(x == 0, 0.0, x * np.log(y))


def klucb_upper(p: np.ndarray, level: np.ndarray) -> np.ndarray:
    """max{q ∈ [p, 1] : kl(p, q) ≤ level} by bisection (:data:`KL_HALVINGS` halvings; returns the
    lower end of the final bracket, which satisfies the constraint).

    >>> round(float(klucb_upper(np.array(0.5), np.array(0.1))), 6)
    0.712879
    """
    p = np.asarray(p, dtype=float)
    lo = p.copy()
    hi = np.ones_like(lo)
    level = np.broadcast_to(np.asarray(level, dtype=float), lo.shape)
    for _ in range(KL_HALVINGS):
        mid = 0.5 * (lo + hi)
        ok = kl_bernoulli(p, mid) <= level
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return lo


# ---------------------------------------------------------------------------------------
# DP-SE


@dataclass(frozen=True)
class DPSE(Policy):
    """DP-SE (Sajed & Sheffet 2019) with failure probability ``beta`` (module docstring)."""

    epsilon: float = 1.0
    beta: float = 1e-6
    engine: str = "fast"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "beta", check_probability("beta", self.beta))
        if self.engine not in ("fast", "step"):
            raise ValueError(f"engine must be 'fast' or 'step', got {self.engine!r}")

    @property
    def name(self) -> str:
        return f"dp-se(eps={self.epsilon:g},beta={self.beta:g})"

    def epoch_length(self, e: int, active: int) -> int:
        """R_e = ⌈max{32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e)}⌉, Δ_e = 2^{−e}."""
        d = 2.0 ** (-e)
        r1 = 32.0 * math.log(8.0 * active * e * e / self.beta) / (d * d)
        r2 = 8.0 * math.log(4.0 * active * e * e / self.beta) / (self.epsilon * d)
        return int(math.ceil(max(r1, r2)))

    def linear_regret(self, horizon: int, env: Any) -> str | None:
        """The first epoch pulls every arm R_1 times in turn; a horizon within it is round robin."""
        first = env.n_arms * self.epoch_length(1, env.n_arms)
        if horizon > first:
            return None
        return (
            f"the horizon is within DP-SE's first epoch ({env.n_arms} arms x {first // env.n_arms:,} pulls = "
            f"{first:,} rounds): it plays round robin throughout (a larger --beta shortens that epoch)"
        )

    def radius(self, e: int, active: int, length: int) -> float:
        """h_e + c_e; arms more than twice this below the best private mean are eliminated."""
        h = math.sqrt(math.log(8.0 * active * e * e / self.beta) / (2.0 * length))
        c = math.log(4.0 * active * e * e / self.beta) / (length * self.epsilon)
        return h + c

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        return Declaration(
            LaplaceMechanism.from_epsilon(self.epsilon).event,
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(SAJED_SHEFFET_2019, "DP-SE", epsilon=self.epsilon, delta=0.0),
            note="each reward is in one epoch mean, released once with Lap(1/(eps R_e)) (sensitivity 1/R_e)",
        )

    def agent(self, run: RunContext) -> DPSEAgent:
        return DPSEAgent(self, run)


class DPSEAgent(SegmentAgent):
    def __init__(self, policy: DPSE, run: RunContext) -> None:
        super().__init__(run, Feedback.BANDIT, policy.engine)
        self.policy = policy
        R, K = self.reps, self.n_arms
        self.event = LaplaceMechanism.from_epsilon(policy.epsilon).event
        self.b = 1.0 / policy.epsilon
        E = 2
        while policy.epoch_length(E, 2) <= self.horizon:  # the last epoch that can start
            E += 1
        self.Z = run.noise.laplace((E + 1, K))  # Z[r, e, j]: arm j's noise in epoch e
        self.active = np.ones((R, K), dtype=bool)
        self.e = np.ones(R, dtype=np.int64)
        self.Re = np.full(R, policy.epoch_length(1, K), dtype=np.int64)
        self.block_start = np.zeros(R, dtype=np.int64)
        self.mu = np.zeros((R, K))
        self.arm[:] = 0
        self.left[:] = self.Re
        self.done = np.zeros(R, dtype=bool)  # one arm left: play it to the end

    def end_segment(self, rows: np.ndarray, t: int) -> None:
        for r in rows.tolist():
            if self.done[r]:  # pragma: no cover - the last arm's segment never ends before T
                self.left[r] = self.horizon
                continue
            a, Re = int(self.arm[r]), int(self.Re[r])
            self.run.ledgers.record(
                [r],
                self.event,
                units=range(t + 1 - Re, t + 1),
                arm=a,
                round=t,
                label=f"DP-SE epoch {int(self.e[r])} arm {a} ({Re} pulls)",
            )
            nxt = np.flatnonzero(self.active[r, a + 1 :])
            if nxt.size:  # next arm's block of this epoch
                self.arm[r] = a + 1 + nxt[0]
                self.left[r] = Re
                continue
            e = int(self.e[r])
            act = np.flatnonzero(self.active[r])
            self.mu[r, act] = (self.Phi[r, act] + self.b * self.Z[r, e, act]) / Re
            keys = [f"DP-SE epoch {e} mean of arm {j}" for j in act.tolist()]
            self.run.ledgers.released([r] * act.size, keys, self.mu[r, act])
            best = self.mu[r, act].max()
            rad = self.policy.radius(e, act.size, Re)
            self.active[r, act[best - self.mu[r, act] > 2.0 * rad]] = False
            self.Phi[r] = 0.0
            act = np.flatnonzero(self.active[r])
            if act.size == 1:
                self.done[r] = True
                self.arm[r] = act[0]
                self.left[r] = max(1, self.horizon - t - 1)
                continue
            self.e[r] = e + 1
            self.Re[r] = self.policy.epoch_length(e + 1, act.size)
            self.arm[r] = act[0]
            self.left[r] = self.Re[r]


# ---------------------------------------------------------------------------------------
# AdaP-UCB / AdaP-KLUCB


@dataclass(frozen=True)
class AdaP(Policy):
    """AdaP-UCB (``index="ucb"``) or AdaP-KLUCB (``index="klucb"``, default), Azize & Basu 2022."""

    epsilon: float = 1.0
    alpha: float = 3.1
    index: str = "klucb"
    engine: str = "fast"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        a = check_positive("alpha", self.alpha)
        if a <= 3.0:
            raise ValueError(
                f"alpha must be in (3, inf) (Azize & Basu's analysis needs alpha > 3), got {a!r}"
            )
        object.__setattr__(self, "alpha", a)
        if self.index not in ("ucb", "klucb"):
            raise ValueError(f"index must be 'ucb' or 'klucb', got {self.index!r}")
        if self.engine not in ("fast", "step"):
            raise ValueError(f"engine must be 'fast' or 'step', got {self.engine!r}")

    @property
    def name(self) -> str:
        return f"adap-{self.index}(eps={self.epsilon:g},alpha={self.alpha:g})"

    def indices(self, mu: np.ndarray, m: np.ndarray, t_l: int) -> np.ndarray:
        """I_a(t_ℓ − 1, α) from private means ``mu`` of last episodes of length ``m``."""
        lt = math.log(t_l)
        if self.index == "ucb":
            return (
                mu
                + np.sqrt(self.alpha * math.log(2.0 * t_l) / (2.0 * m))
                + self.alpha * lt / (self.epsilon * m)
            )
        clipped = np.clip(mu + self.alpha * lt / (self.epsilon * m), 0.0, 1.0)
        return klucb_upper(clipped, self.alpha * lt / m)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        return Declaration(
            LaplaceMechanism.from_epsilon(self.epsilon).event,
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(AZIZE_BASU_2022, "Theorems 6-8", epsilon=self.epsilon, delta=0.0),
            note="each reward is in one episode mean, released once with Lap(1/(eps m)) (sensitivity 1/m)",
        )

    def agent(self, run: RunContext) -> AdaPAgent:
        return AdaPAgent(self, run)


class AdaPAgent(SegmentAgent):
    def __init__(self, policy: AdaP, run: RunContext) -> None:
        super().__init__(run, Feedback.BANDIT, policy.engine)
        self.policy = policy
        R, K = self.reps, self.n_arms
        self.event = LaplaceMechanism.from_epsilon(policy.epsilon).event
        self.b = 1.0 / policy.epsilon
        L = max(1, int(self.horizon).bit_length()) + 1
        self.Z = run.noise.laplace((K, L))  # Z[r, a, q]: arm a's noise for its episode q
        self.n = np.zeros((R, K), dtype=np.int64)  # pulls so far
        self.m = np.ones((R, K))  # length of the last completed episode
        self.q = np.zeros((R, K), dtype=np.int64)  # episodes completed
        self.mu = np.zeros((R, K))
        self.arm[:] = 0
        self.left[:] = 1

    def end_segment(self, rows: np.ndarray, t: int) -> None:
        a = self.arm[rows]
        length = np.maximum(self.n[rows, a], 1)  # episode length: the count doubles (1 initially)
        q = self.q[rows, a]
        self.mu[rows, a] = (self.Phi[rows, a] + self.b * self.Z[rows, a, q]) / length
        keys = [f"AdaP episode {e} mean of arm {j}" for j, e in zip(a.tolist(), q.tolist())]
        self.run.ledgers.released(rows, keys, self.mu[rows, a])
        self.m[rows, a] = length
        self.q[rows, a] = q + 1
        self.n[rows, a] += length
        self.Phi[rows, a] = 0.0
        for r, arm, ln in zip(rows.tolist(), a.tolist(), length.tolist()):
            self.run.ledgers.record(
                [r],
                self.event,
                units=range(t + 1 - ln, t + 1),
                arm=arm,
                round=t,
                label=f"AdaP episode of arm {arm} ({ln} pulls)",
            )
        K = self.n_arms
        if t + 1 < K:  # initialisation: each arm once
            self.arm[rows] = t + 1
            self.left[rows] = 1
            return
        t_l = t + 2  # the next round, 1-based
        idx = self.policy.indices(self.mu[rows], self.m[rows], t_l)
        nxt = idx.argmax(axis=1)
        self.arm[rows] = nxt
        self.left[rows] = self.n[rows, nxt]
