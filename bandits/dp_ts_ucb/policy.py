"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer & Hegde 2025, "Connecting Thompson Sampling and UCB"), as
reconstructed in ``docs/dp-ts-ucb.md``.

Per arm j, the empirical mean μ̂_j of its **last completed epoch** only (epoch r: the arm's next
f·2^r observations, f = ``first_epoch``; every observation enters one mean), n_j its size. When
an epoch completes, its mean replaces μ̂_j, the sampling budget h_j is reset to φ and the running
maximum M_j to −∞. In every round after the initial pulls (round-robin, f per arm), every arm
with h_j ≥ 1 draws θ_j ~ N(μ̂_j, ln^α(T)/n_j), h_j ← h_j − 1, M_j ← max(M_j, θ_j) (the
"TS-Gaussian phase"); an arm with h_j = 0 reuses M_j (the "UCB phase"). The round plays the arm
with the largest index: θ_j in the TS phase (``index="sample"``) or M_j (``index="max"``), M_j in
the UCB phase. φ = ⌈c₀·T^{0.5(1−α)}·ln^{0.5(3−α)}(T)⌉ (:func:`dpaudit.analyses.dp_ts_ucb.sample_budget`).

**Privacy** (:mod:`dpaudit.analyses.dp_ts_ucb`, one source of truth): a round's reward enters
one epoch mean (ℓ2-sensitivity 1/n); each sample is a Gaussian mechanism with σ = sqrt(L/n),
L = ln^α(T); at most φ samples per mean; the maximum, the argmax and the epoch boundaries are
post-processing. Worst case n = f: μ = sqrt(φ/(f·L)). The agent records, per repetition, one
ledger entry per epoch mean with the samples it really drew from it and the σ it really used,
whose units are the (0-based) rounds of the mean's observations; under an audit every sample is
kept as a release ("arm j epoch e sample k").

Randomness: one standard normal per arm and sampling round from the run's privacy-noise stream
(``run.noise``; drawn for every arm, used where h_j ≥ 1, so the stream does not depend on the
chunking), and the tie order from the policy stream when ``ties="random"``.

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> pol = DPTSUCB(alpha=1.0)
    >>> res = simulate(pol, BernoulliEnv((0.9, 0.1)), 400, 2, seed=0, record_actions=True, progress=False)
    >>> res.actions[:, :2].tolist()  # the initial pulls
    [[0, 1], [0, 1]]
    >>> d = pol.declare(400, 2)
    >>> d.event.num_releases, d.published.source
    (6, 'Hu et al. (2025), Theorem 4.4')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.actions import ActionStructure
from bandits.engine import compiled
from bandits.lazy.policies import UNIT, EpochRoundsLog, argmax_in_order, priority_order
from bandits.policy import Agent, Outcomes, Policy, RunContext
from dpaudit.analyses.dp_ts_ucb import ROUNDINGS, DPTSUCBPrivacy
from dpaudit.data_units import UnitRuns, Units, normalise_units
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import Neighbouring
from dpaudit.papers import HU_2025
from dpaudit.validation import check_integer
from mechanisms.gaussian import GaussianMechanism

__all__ = ["DPTSUCB", "DPTSUCBAgent", "INDEX_RULES", "TIES"]

INDEX_RULES = ("sample", "max")
"""The index of an arm in its TS phase: its fresh sample, or the maximum of its samples so far."""
TIES = ("lowest", "random")


@dataclass(frozen=True)
class DPTSUCB(Policy):
    """DP-TS-UCB (module docstring); every reconstruction assumption is a field.

    Attributes:
        alpha: the trade-off α ∈ [0, 1] (privacy ↔ regret).
        c0: the constant c₀ > 0 of the sampling budget φ.
        first_epoch: f ≥ 1, the observations of an arm's first epoch (epoch r has f·2^r).
        rounding: ``"ceil"`` or ``"floor"`` (at least 1) for φ.
        index: ``"sample"`` or ``"max"`` (:data:`INDEX_RULES`).
        ties: ``"lowest"`` or ``"random"`` (a random arm order per run).
        design_horizon: the T in φ and ln^α(T) (None: the run's horizon, the paper's known T).

    >>> DPTSUCB().name, DPTSUCB(alpha=0.5, c0=0.1, index="max").name
    ('dp-ts-ucb(alpha=1)', 'dp-ts-ucb(alpha=0.5,c0=0.1,index=max)')
    >>> DPTSUCB(alpha=2)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be in [0, 1], got 2
    """

    alpha: float = 1.0
    c0: float = 1.0
    first_epoch: int = 1
    rounding: str = "ceil"
    index: str = "sample"
    ties: str = "lowest"
    design_horizon: int | None = None

    def __post_init__(self) -> None:
        if self.rounding not in ROUNDINGS:
            raise ValueError(f"rounding must be one of {list(ROUNDINGS)}, got {self.rounding!r}")
        if self.index not in INDEX_RULES:
            raise ValueError(f"index must be one of {list(INDEX_RULES)}, got {self.index!r}")
        if self.ties not in TIES:
            raise ValueError(f"ties must be one of {list(TIES)}, got {self.ties!r}")
        if self.design_horizon is not None:
            T = check_integer("design_horizon", self.design_horizon, 2)
            object.__setattr__(self, "design_horizon", T)
        object.__setattr__(self, "first_epoch", check_integer("first_epoch", self.first_epoch, 1))
        p = DPTSUCBPrivacy(self.design_horizon or 2, self.alpha, self.c0, self.first_epoch, self.rounding)
        object.__setattr__(self, "alpha", p.alpha)
        object.__setattr__(self, "c0", p.c0)

    @property
    def name(self) -> str:
        extra = [f"alpha={self.alpha:g}"]
        for field, default in (("c0", 1.0), ("first_epoch", 1), ("rounding", "ceil"), ("index", "sample"),
                               ("ties", "lowest"), ("design_horizon", None)):  # fmt: skip
            value = getattr(self, field)
            if value != default:
                extra.append(f"{field}={value:g}" if isinstance(value, float) else f"{field}={value}")
        return "dp-ts-ucb(" + ",".join(extra) + ")"

    def privacy(self, horizon: int) -> DPTSUCBPrivacy:
        """The privacy analysis of this configuration run for ``horizon`` rounds (φ and ln^α use
        ``design_horizon`` when it is set)."""
        T = self.design_horizon if self.design_horizon is not None else horizon
        return DPTSUCBPrivacy(T, self.alpha, self.c0, self.first_epoch, self.rounding)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        """φ Gaussian samples of one mean of f observations per unit (the worst case of
        :mod:`dpaudit.analyses.dp_ts_ucb`), Theorem 4.4 beside it.

        >>> d = DPTSUCB(alpha=1.0).declare(100_000, 5)
        >>> d.event.num_releases, d.unit
        (12, "one round's reward vector")
        """
        p = self.privacy(horizon)
        return Declaration(
            p.event(),
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(
                HU_2025, "Theorem 4.4", mu=p.mu_paper, note=f"GDP of the whole run; verdict: {p.verdict()}"
            ),
            note=f"each round's observed reward enters one epoch mean (sensitivity 1/n); at most phi = "
            f"{p.samples} samples N(mean, ln^alpha(T)/n) of it, each (1/sqrt(n ln^alpha T))-GDP; worst "
            f"n = {self.first_epoch}; maxima and argmax are post-processing (dpaudit.analyses.dp_ts_ucb)",
        )

    def agent(self, run: RunContext) -> DPTSUCBAgent:
        return DPTSUCBAgent(self, run)

    def release_audit(self, horizon: int, n_arms: int) -> tuple[Sequence[Any], Mapping[str, Sequence[Any]]]:
        """Every arm's lead pair and the Gaussian loss of its first-epoch samples
        (:func:`bandits.dp_ts_ucb.audit.release_design`)."""
        from bandits.dp_ts_ucb.audit import release_design

        return release_design(self, horizon, n_arms)


class _SampleLog(EpochRoundsLog):
    """Which rounds' observations each epoch mean holds (:class:`~bandits.lazy.policies.EpochRoundsLog`),
    and one ledger entry per mean when it retires (or the run ends) with the samples really
    drawn from it and the scale really used."""

    def __init__(self, agent: DPTSUCBAgent) -> None:
        super().__init__(agent.run, agent.mechanism(1).event, "Gaussian samples of")
        self.agent = agent
        K = agent.n_arms
        # per repetition and arm: the units of the live epoch mean and its epoch number
        self.live: list[list[tuple[Units, int] | None]] = [[None] * K for _ in range(agent.reps)]

    def emit(self, r: int, j: int, t: int, units: UnitRuns) -> None:
        old = self.live[r][j]
        if old is not None:
            drawn, n, sigma = self.agent.retired.pop((r, j, t))
            self.write(r, j, old, drawn, n, sigma)
        self.live[r][j] = (normalise_units(units), 0 if old is None else old[1] + 1)

    def write(self, r: int, j: int, live: tuple[Units, int], drawn: int, n: int, sigma: float) -> None:
        """Record ``drawn`` samples of arm ``j``'s epoch mean ``live`` (its units, its epoch)."""
        if drawn == 0 or not self.run.ledgers.recording:
            return
        units, epoch = live
        ev = GaussianMechanism(sigma=sigma, sensitivity=1.0 / n).event.repeat(drawn)
        label = f"{drawn} samples N(mean, {sigma * sigma:.4g}) of arm {j} epoch {epoch} ({n} obs)"
        self.run.ledgers[r].record(ev, units=units, arm=j, label=label)

    def close(self) -> None:
        """Record every mean still live at the end of the run."""
        a = self.agent
        for r in range(a.reps):
            for j in range(a.n_arms):
                live = self.live[r][j]
                if live is not None:
                    self.write(r, j, live, int(a.drawn[r, j]), int(a.n[r, j]), float(a.sd[r, j]))
                    self.live[r][j] = None


class DPTSUCBAgent(Agent):
    """DP-TS-UCB for R repetitions: the plain step loop, vectorised across repetitions."""

    def __init__(self, policy: DPTSUCB, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        p = policy.privacy(run.horizon)
        self.phi, self.sqrtL, self.f = p.samples, math.sqrt(p.log_factor), policy.first_epoch
        shape = (self.reps, self.n_arms)
        self.mean, self.sd = np.zeros(shape), np.ones(shape)
        self.n = np.zeros(shape, dtype=np.int64)  # observations in the current mean
        self.h = np.zeros(shape, dtype=np.int64)  # samples left in its budget
        self.drawn = np.zeros(shape, dtype=np.int64)  # samples drawn from it
        self.mx = np.full(shape, -np.inf)  # their maximum
        self.ep = np.full(shape, -1, dtype=np.int64)  # the last completed epoch
        self.N = np.zeros(shape, dtype=np.int64)  # observations of the epoch in progress
        self.Phi = np.zeros(shape)  # their sum
        self.perm = priority_order(run, policy.ties) if policy.ties == "random" else None
        self.init_end = min(self.f * self.n_arms, self.horizon)  # round-robin initial pulls
        self._Z = np.empty((self.reps, 0, self.n_arms))
        self._zoff = self.init_end
        self.retired: dict[tuple[int, int, int], tuple[int, int, float]] = {}
        self._rel: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.log = _SampleLog(self)
        # the compiled round loop (the same arithmetic), unless an audit keeps every sample
        self._order: np.ndarray | None = None
        self._compiled = (run.ledgers.transcripts is None
                          and compiled.worth_compiling(self.reps * self.horizon))

    def mechanism(self, n: int) -> GaussianMechanism:
        """One sample of a mean of ``n`` observations, at the scale this agent uses."""
        return GaussianMechanism(sigma=self.sqrtL / math.sqrt(n), sensitivity=1.0 / n)

    def prepare(self, t0: int, t1: int) -> None:
        start = max(t0, self.init_end)  # the initial pulls draw nothing
        self._Z = self.run.noise.standard_normal((max(0, t1 - start), self.n_arms))
        self._zoff = start

    def select(self, t: int) -> np.ndarray:
        if t < self.init_end:
            return np.full(self.reps, t % self.n_arms, dtype=np.intp)
        sampling = self.h > 0
        theta = self.mean + self.sd * self._Z[:, t - self._zoff]
        self.mx = np.where(sampling, np.maximum(self.mx, theta), self.mx)
        fresh = self.mx if self.policy.index == "max" else theta
        index = np.where(sampling, fresh, self.mx)
        if self.run.ledgers.transcripts is not None:
            self._keep(sampling, theta)
        self.h -= sampling
        self.drawn += sampling
        return argmax_in_order(index, self.perm)

    def _keep(self, sampling: np.ndarray, theta: np.ndarray) -> None:
        """Keep this round's samples as releases (an audit's transcripts)."""
        for j in range(self.n_arms):
            rows = np.flatnonzero(sampling[:, j])
            keys = [f"arm {j} epoch {e} sample {k}" for e, k in zip(self.ep[rows, j], self.drawn[rows, j])]
            self.run.ledgers.released(rows, keys, theta[rows, j])

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        rows = self.rows
        self.N[rows, arms] += 1
        self.Phi[rows, arms] += rewards
        done = self.N[rows, arms] == self.f << (self.ep[rows, arms] + 1)
        if not done.any():
            return
        rr, aa = rows[done], arms[done]
        for r, a in zip(rr.tolist(), aa.tolist()):
            if self.ep[r, a] >= 0:
                self.retired[(r, a, t)] = (int(self.drawn[r, a]), int(self.n[r, a]), float(self.sd[r, a]))
        self.n[rr, aa] = self.N[rr, aa]
        self.mean[rr, aa] = self.Phi[rr, aa] / self.N[rr, aa]
        self.sd[rr, aa] = self.sqrtL / np.sqrt(self.N[rr, aa])
        self.h[rr, aa] = self.phi
        self.drawn[rr, aa] = 0
        self.mx[rr, aa] = -np.inf
        self.ep[rr, aa] += 1
        self.N[rr, aa] = 0
        self.Phi[rr, aa] = 0.0
        self._rel.append((rr, aa, t))

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        self.prepare(t0, t1)
        actions = np.empty((self.reps, t1 - t0), dtype=np.intp)
        if self._compiled:
            rr, aa, tt = self._compiled_chunk(t0, outcomes.table, actions)
            self.log.add(t0, actions, rr, aa, tt)
            return actions
        rows, table = self.rows, outcomes.table
        for k in range(t1 - t0):
            a = self.select(t0 + k)
            self.update(t0 + k, a, table[rows, k, a])
            actions[:, k] = a
        rel, self._rel = self._rel, []
        rr = np.concatenate([r for r, _, _ in rel]) if rel else np.empty(0, dtype=np.int64)
        aa = np.concatenate([a for _, a, _ in rel]) if rel else np.empty(0, dtype=np.int64)
        tt = np.concatenate([np.full(r.size, t) for r, _, t in rel]) if rel else np.empty(0, dtype=np.int64)
        self.log.add(t0, actions, rr, aa, tt)
        return actions

    def _compiled_chunk(self, t0: int, table: np.ndarray, actions: np.ndarray,
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The chunk by :func:`bandits.engine.compiled.dp_ts_ucb_chunk` (the arithmetic of
        :meth:`select`/:meth:`update`, bit for bit); returns the epoch closings (repetitions, arms,
        rounds) and keeps the retired means as :meth:`update` does."""
        if self._order is None:  # the tie order, built once
            self._order = (self.perm if self.perm is not None
                           else np.tile(np.arange(self.n_arms), (self.reps, 1)))
        state = {"mean": self.mean, "sd": self.sd, "n": self.n, "h": self.h, "drawn": self.drawn,
                 "mx": self.mx, "ep": self.ep, "N": self.N, "Phi": self.Phi}
        ev, ev_sd = compiled.dp_ts_ucb_chunk(t0, self.init_end, self._zoff, table, self._Z, self._order,
                                             self.policy.index == "max", self.phi, self.sqrtL, self.f, state,
                                             actions)
        for (r, a, t, drawn, n, existed), sd in zip(ev.tolist(), ev_sd.tolist()):
            if existed:
                self.retired[(r, a, t)] = (drawn, n, sd)
        return ev[:, 0], ev[:, 1], ev[:, 2]

    def finish(self) -> None:
        self.log.close()
        super().finish()
