"""The lazy-epoch bandits of Hu et al. (2024): Anytime-Lazy-UCB (Alg. 1) and Lazy-DP-TS (Alg. 3), as
written (Hu, Huang, Mehta & Hegde, *Near-Optimal Algorithms for Differentially Private Online
Learning in a Stochastic Environment*, arXiv:2102.07929).

Both keep, per arm j, the private mean μ̃_j of its **last completed epoch** only (forgetful) and
ignore the epoch in progress (lazy). Epoch 0 of an arm is its single initial pull (round j);
epoch r ≥ 1 is its next 2^r pulls. When arm j's epoch r fills, one noisy sum is released,
μ̃_j ← (Φ_j + Lap(1/ε))/2^r, O_j ← 2^r, and the buffer (N_j, Φ_j) is emptied (Alg. 1 lines 5–8).
Rounds are 0-based here; the paper's round is t + 1, so the bonuses use ln(t + 1).

* **Anytime-Lazy-UCB** plays argmax_j μ̃_j + sqrt(3 ln t/O_j) + 3 ln t/(ε O_j) (Alg. 1 line 3).
* **Lazy-DP-TS** draws θ_j ~ Beta(μ̄_j O_j + 1, (1 − μ̄_j) O_j + 1) with
  μ̄_j = Clip[0,1](μ̃_j + 3 ln t/(ε O_j)) and plays argmax θ (Alg. 3 lines 3–4).

Options the paper leaves open, each explicit with the paper-faithful default:

* ``log`` — the log in the bonuses: ``"ln"`` (Alg. 1 and Appendix C, eq. for C_j/G_j: the
  Laplace tail P(|Lap(1/ε)|/O > 3 ln t/(εO)) = t^{-3} needs the natural log); ``"log2"`` and
  ``"log10"`` for Alg. 3's ambiguous "log".
* ``ties`` — ``"lowest"`` (the lowest arm index among maximisers; ties have probability 0 since
  the noise is continuous) or ``"random"`` (a uniformly random priority order of the arms, drawn
  once per run from the policy stream).

**Privacy** (Thms 2 and 4): a round's reward vector is seen only through the pulled arm's reward,
which enters exactly one epoch sum (sensitivity 1 for rewards in [0, 1]), released once with
Lap(1/ε); everything else is post-processing. Adaptive parallel composition over the disjoint
epochs gives ε per round. :meth:`LazyUCB.declare` says so; every agent records, per repetition,
one ledger entry per released epoch whose units are the (0-based) rounds of its observations,
so the observed charge is ε on every processed round and 0 on the rounds of trailing partial
epochs (tested).

**Engines** (identical actions, tested): ``"step"`` — the plain per-round loop (``select``/
``update``, vectorised across repetitions); Anytime-Lazy-UCB's ``"fast"`` engine evaluates the
(deterministic) indices over a window of rounds and jumps to the next epoch end; Lazy-DP-TS's
``"numba"`` engine runs the per-repetition loop compiled (:mod:`bandits.engine.compiled`). ``"auto"``
picks the fast one available (for Anytime-Lazy-UCB: the jump engine up to
:attr:`LazyUCBAgent.FAST_MAX_ARMS` arms, the step loop above, where jumping costs more; for
Lazy-DP-TS: numba for runs long enough to repay loading it, ``worth_compiling``).

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> env = BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25))
    >>> fast = simulate(LazyUCB(epsilon=1.0), env, 3000, 3, seed=1, record_actions=True, progress=False)
    >>> step = simulate(LazyUCB(epsilon=1.0, engine="step"), env, 3000, 3, seed=1, record_actions=True,
    ...                 progress=False)
    >>> bool((fast.actions == step.actions).all())
    True
    >>> LazyUCB(epsilon=0.5).declare(1000, 5).event.epsilon
    0.5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from bandits.actions import ActionStructure
from bandits.engine.compiled import HAVE_NUMBA, lazy_ts_chunk, worth_compiling
from bandits.lazy.ordering import LOGS, argmax_in_order, log_table, priority_order
from bandits.policy import Agent, Outcomes, Policy, RunContext
from dpaudit.data_units import UnitRuns
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import Neighbouring, PrivacyEvent
from dpaudit.papers import HU_2024
from dpaudit.validation import check_positive
from mechanisms.laplace import LaplaceMechanism

__all__ = [
    "LazyUCB",
    "LazyDPTS",
    "LazyAgent",
    "LOGS",
    "UNIT",
    "EpochRoundsLog",
    "log_table",
    "priority_order",
    "argmax_in_order",
]

UNIT = "one round's reward vector"
BONUS = 3.0
"""The constant 3 of both bonuses (Alg. 1 line 3, Alg. 3 line 3)."""


def _check_common(policy: _LazyPolicy) -> None:
    object.__setattr__(policy, "epsilon", check_positive("epsilon", policy.epsilon))
    if policy.log not in LOGS:
        raise ValueError(f"log must be one of {sorted(LOGS)}, got {policy.log!r}")
    if policy.ties not in ("lowest", "random"):
        raise ValueError(f"ties must be 'lowest' or 'random', got {policy.ties!r}")


def _append_runs(runs: UnitRuns | None, rounds: np.ndarray) -> UnitRuns:
    """``runs`` followed by the sorted, non-empty ``rounds`` (all after them), a run that
    continues across the join merged: equal to :meth:`UnitRuns.from_units` of all the rounds.

    >>> _append_runs(_append_runs(None, np.array([0, 1, 4])), np.array([5, 9]))
    UnitRuns(5 units in 3 runs: 0..1, 4..5, 9..9)
    """
    new = UnitRuns.from_units(rounds)
    return new if runs is None else runs.followed_by(new)


class EpochRoundsLog:
    """Turns a chunk's actions and its epoch releases into one ledger entry per release whose
    units are the rounds of that epoch's observations (compact :class:`~dpaudit.data_units.UnitRuns`).

    Per repetition and arm it keeps the rounds of the epoch in progress as runs of consecutive
    rounds (so an arm played in every round holds one run, whatever the horizon); a release of
    arm j at round t takes every buffered round of j up to t. It only reads what the engine
    played and released, so a double release or a round in two epochs shows up in the ledger
    check.
    """

    def __init__(self, run: RunContext, event: PrivacyEvent, label: str) -> None:
        self.run, self.event, self.label = run, event, label
        K = run.n_arms
        self.pending: list[list[UnitRuns | None]] = [[None] * K for _ in range(run.reps)]

    def emit(self, r: int, j: int, t: int, units: UnitRuns) -> None:
        """Arm ``j``'s epoch of the rounds ``units`` was released at round ``t`` in repetition
        ``r``: record it (a subclass may record its releases later, e.g. per sample)."""
        self.run.ledgers[r].record(
            self.event, units=units, arm=j, round=t, label=f"{self.label} arm {j} epoch of {len(units)} obs"
        )

    @staticmethod
    def split(rounds: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
        """(the rounds up to and including the release round t, the rest)."""
        cut = int(np.searchsorted(rounds, t, side="right"))
        return rounds[:cut], rounds[cut:]

    def add(
        self, t0: int, actions: np.ndarray, rel_rep: ArrayLike, rel_arm: ArrayLike, rel_round: ArrayLike
    ) -> None:
        """``actions`` (R, C) of rounds t0..; releases as parallel integer sequences."""
        if not self.run.ledgers.recording:  # an audit's trajectories: nobody reads the entries
            return
        R, C = actions.shape
        by_rep: dict[int, list[tuple[int, int]]] = {}
        for r, j, t in zip(
            np.asarray(rel_rep).tolist(), np.asarray(rel_arm).tolist(), np.asarray(rel_round).tolist()
        ):
            by_rep.setdefault(r, []).append((t, j))
        K = self.run.n_arms
        for r in range(R):
            row = actions[r]
            rels = sorted(by_rep.get(r, ()))
            touched = {j for _, j in rels}
            for j in range(K):
                idx = np.flatnonzero(row == j)
                if idx.size == 0 and j not in touched:
                    continue
                idx = idx + t0
                if j in touched:
                    for t, jj in rels:
                        if jj != j:
                            continue
                        done, idx = self.split(idx, t)
                        units = _append_runs(self.pending[r][j], done) if done.size else self.pending[r][j]
                        if units is None:  # no entry can show it to the ledger check: the engine's bug
                            raise RuntimeError(f"the engine released arm {j}'s epoch in repetition {r} at "
                                               f"round {t}, but that epoch holds no observation")  # fmt: skip
                        self.pending[r][j] = None
                        self.emit(r, j, t, units)
                if idx.size:
                    self.pending[r][j] = _append_runs(self.pending[r][j], idx)


@dataclass(frozen=True)
class _LazyPolicy(Policy):
    epsilon: float = 1.0
    log: str = "ln"
    ties: str = "lowest"
    engine: str = "auto"

    _ENGINES: ClassVar[tuple[str, ...]] = ("auto", "step")
    _theorem: ClassVar[str] = ""
    table_bytes_per_round = 8

    def __post_init__(self) -> None:
        _check_common(self)
        if self.engine not in self._ENGINES:
            raise ValueError(f"engine must be one of {list(self._ENGINES)}, got {self.engine!r}")

    @property
    def mechanism(self) -> LaplaceMechanism:
        """One epoch release: Lap(1/ε) on a sum of rewards in [0, 1] (sensitivity 1)."""
        return LaplaceMechanism.from_epsilon(self.epsilon)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        """One Laplace release per round: its epoch sum (parallel composition over epochs)."""
        return Declaration(
            self.mechanism.event,
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(HU_2024, self._theorem, epsilon=self.epsilon, delta=0.0),
            note="each round's observed reward enters exactly one epoch sum, released once with "
            "Lap(1/epsilon) (sensitivity 1); indices and posteriors are post-processing",
        )

    def _suffix(self) -> str:
        extra = [f"eps={self.epsilon:g}"]
        if self.log != "ln":
            extra.append(f"log={self.log}")
        if self.ties != "lowest":
            extra.append("ties=random")
        return "(" + ",".join(extra) + ")"


class LazyAgent(Agent):
    """Per-arm doubling-epoch state for R repetitions (module docstring); subclasses choose."""

    def __init__(self, policy: _LazyPolicy, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        R, K = self.reps, self.n_arms
        mech = policy.mechanism
        self.b = mech.scale
        self.eps = policy.epsilon
        L = max(1, int(self.horizon).bit_length())  # epochs per arm: 2^{r+1} − 1 <= T => r < L
        # Z[r, j, e]: the standard Laplace of arm j's epoch e (drawn up front, per repetition)
        self.Z = run.noise.laplace((K, L + 1))
        self.mu = np.zeros((R, K))
        self.O = np.ones((R, K))
        self.ep = np.full((R, K), -1, dtype=np.int64)  # last processed epoch (−1: none yet)
        self.N = np.zeros((R, K), dtype=np.int64)  # pulls in the epoch in progress
        self.Phi = np.zeros((R, K))  # their reward sum
        self.logt = log_table(self.horizon, policy.log)
        self.perm = priority_order(run, policy.ties)
        self._random_ties = policy.ties == "random"
        self.epochs = EpochRoundsLog(run, mech.event, "Lap(1/eps) epoch sum,")
        self._rel: list[tuple[np.ndarray, np.ndarray, int]] = []

    # -- the argmax with the tie rule ------------------------------------------------------
    def _argmax(self, values: np.ndarray) -> np.ndarray:
        """argmax over the last axis in each repetition's priority order (first maximum)."""
        return argmax_in_order(values, self.perm if self._random_ties else None)

    # -- Alg. 1 lines 5-8, shared -----------------------------------------------------------
    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        rows = self.rows
        self.N[rows, arms] += 1
        self.Phi[rows, arms] += rewards
        e = self.ep[rows, arms] + 1
        done = self.N[rows, arms] == (np.int64(1) << e)
        if done.any():
            rr, aa, ee = rows[done], arms[done], e[done]
            On = np.ldexp(1.0, ee)
            self.mu[rr, aa] = (self.Phi[rr, aa] + self.b * self.Z[rr, aa, ee]) / On
            self._released(rr, aa, ee)
            self.O[rr, aa] = On
            self.ep[rr, aa] = ee
            self.N[rr, aa] = 0
            self.Phi[rr, aa] = 0.0
            self._rel.append((rr, aa, t))

    def _released(self, rr: np.ndarray, aa: np.ndarray, ee: np.ndarray) -> None:
        """Keep the epoch means just released when the run keeps transcripts (an audit)."""
        if self.run.ledgers.transcripts is not None:
            keys = [f"epoch {e} mean of arm {a}" for a, e in zip(aa.tolist(), ee.tolist())]
            self.run.ledgers.released(rr, keys, self.mu[rr, aa])

    def _flush_releases(self, t0: int, actions: np.ndarray) -> None:
        if self._rel:
            rr = np.concatenate([r for r, _, _ in self._rel])
            aa = np.concatenate([a for _, a, _ in self._rel])
            tt = np.concatenate([np.full(r.size, t) for r, _, t in self._rel])
        else:
            rr = aa = tt = np.empty(0, dtype=np.int64)
        self._rel = []
        self.epochs.add(t0, actions, rr, aa, tt)

    def _step(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        actions = np.empty((self.reps, t1 - t0), dtype=np.intp)
        rows = self.rows
        for k in range(t1 - t0):
            a = self.select(t0 + k)
            self.update(t0 + k, a, table[rows, k, a])
            actions[:, k] = a
        return actions

    def _fast(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        return self._step(t0, t1, table)

    def _steps(self) -> bool:
        """Whether this agent plays with the step loop (its policy's engine, "auto" resolved)."""
        return bool(self.policy.engine == "step")

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        engine = self._step if self._steps() else self._fast
        actions = engine(t0, t1, outcomes.table)
        self._flush_releases(t0, actions)
        return actions


# ---------------------------------------------------------------------------------------
# Anytime-Lazy-UCB


@dataclass(frozen=True)
class LazyUCB(_LazyPolicy):
    """Anytime-Lazy-UCB (Hu et al. 2024, Alg. 1); see the module docstring.

    >>> LazyUCB(epsilon=0.25).name
    'lazy-ucb(eps=0.25)'
    """

    _ENGINES: ClassVar[tuple[str, ...]] = ("auto", "fast", "step")
    _theorem: ClassVar[str] = "Theorem 2"

    @property
    def name(self) -> str:
        return "lazy-ucb" + self._suffix()

    def agent(self, run: RunContext) -> LazyUCBAgent:
        return LazyUCBAgent(self, run)


class LazyUCBAgent(LazyAgent):
    """Anytime-Lazy-UCB for R repetitions; ``run_chunk`` jumps between epoch ends."""

    WINDOW = (64, 2048)  # smallest and largest window of rounds evaluated at once
    FAST_MAX_ARMS = 32
    """"auto" jumps up to this many arms and steps above: the jump engine's cost grows with the
    arms (measured, T = 10⁵, 10 repetitions: 0.20× the step loop's time at 5 arms, 0.61× at 20,
    1.21× at 50 (1.12× at T = 10⁶), 3.6× at 500)."""

    def _steps(self) -> bool:
        engine = self.policy.engine
        return engine == "step" or (engine == "auto" and self.n_arms > self.FAST_MAX_ARMS)

    def select(self, t: int) -> np.ndarray:
        if t < self.n_arms:
            return np.full(self.reps, t, dtype=np.intp)
        L = BONUS * self.logt[t]
        U = self.mu + np.sqrt(L / self.O) + L / (self.eps * self.O)
        return self._argmax(U)

    def _fast(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        """Exact jump engine. Between epoch ends the indices are deterministic functions of t,
        so the actions of a window of rounds are computed at once (the step loop's arithmetic,
        element by element); each repetition accepts its window up to and including the first
        round that completes an epoch, whose release is then processed exactly as in
        :meth:`update`. Reward sums are running sums continued from the carry (``cumsum``), so
        they are the step loop's floats."""
        R, K, C = self.reps, self.n_arms, t1 - t0
        actions = np.empty((R, C), dtype=np.intp)
        k0 = 0
        rows = self.rows
        while t0 + k0 < min(t1, K):  # the initial pulls
            a = self.select(t0 + k0)
            self.update(t0 + k0, a, table[rows, k0, a])
            actions[:, k0] = a
            k0 += 1
        pos = np.full(R, k0, dtype=np.int64)
        W = self.WINDOW[0]
        arange_k = np.arange(K)
        while True:
            act = np.flatnonzero(pos < C)
            if act.size == 0:
                break
            w = np.arange(W)
            offs = pos[act, None] + w  # (A, W) chunk offsets
            valid = offs < C
            offs = np.minimum(offs, C - 1)
            L = BONUS * self.logt[t0 + offs][..., None]  # (A, W, 1)
            O, mu = self.O[act, None, :], self.mu[act, None, :]
            U = mu + np.sqrt(L / O) + L / (self.eps * O)
            if self._random_ties:
                perm = np.broadcast_to(self.perm[act, None, :], U.shape)
                kk = np.take_along_axis(U, perm, axis=-1).argmax(axis=-1)
                a = np.take_along_axis(perm, kk[..., None], axis=-1)[..., 0]
            else:
                a = U.argmax(axis=-1)  # (A, W)
            onehot = a[..., None] == arange_k  # (A, W, K)
            cnt = np.cumsum(onehot, axis=1)
            need = (np.int64(1) << (self.ep[act] + 1)) - self.N[act]  # (A, K)
            cnt_a = np.take_along_axis(cnt, a[..., None], axis=2)[..., 0]
            need_a = np.take_along_axis(need, a, axis=1)
            hit = (cnt_a == need_a) & valid
            any_hit = hit.any(axis=1)
            n_valid = valid.sum(axis=1)
            m = np.where(any_hit, hit.argmax(axis=1) + 1, n_valid)  # accepted rounds per rep
            last = m - 1
            # state after the accepted rounds
            sel = np.arange(act.size)
            self.N[act] += cnt[sel, last]
            rew = table[act[:, None], offs, :]  # (A, W, K)
            masked = np.where(onehot, rew, 0.0)
            run = np.cumsum(np.concatenate([self.Phi[act, None, :], masked], axis=1), axis=1)
            self.Phi[act] = run[sel, m]
            keep = w < m[:, None]
            rr_idx, ww = np.nonzero(keep)
            actions[act[rr_idx], offs[rr_idx, ww]] = a[rr_idx, ww]
            # releases at the hit rounds
            if any_hit.any():
                h = np.flatnonzero(any_hit)
                rr = act[h]
                aa = a[h, last[h]]
                ee = self.ep[rr, aa] + 1
                On = np.ldexp(1.0, ee)
                self.mu[rr, aa] = (self.Phi[rr, aa] + self.b * self.Z[rr, aa, ee]) / On
                self._released(rr, aa, ee)
                self.O[rr, aa] = On
                self.ep[rr, aa] = ee
                self.N[rr, aa] = 0
                self.Phi[rr, aa] = 0.0
                for r_, a_, t_ in zip(rr.tolist(), aa.tolist(), (t0 + offs[h, last[h]]).tolist()):
                    self._rel.append((np.array([r_]), np.array([a_]), t_))
            pos[act] += m
            adv = int(np.median(m))
            W = int(min(self.WINDOW[1], max(self.WINDOW[0], 2 * adv)))
        return actions


# ---------------------------------------------------------------------------------------
# Lazy-DP-TS


@dataclass(frozen=True)
class LazyDPTS(_LazyPolicy):
    """Lazy-DP-TS (Hu et al. 2024, Alg. 3; first in Hu & Hegde 2022): Beta posterior on the clipped, shifted
    private mean of the last completed epoch; see the module docstring.

    >>> LazyDPTS(epsilon=1.0).name, LazyDPTS(log="log2").declare(10, 2).published.source
    ('lazy-dp-ts(eps=1)', 'Hu et al. (2024), Theorem 4')
    """

    _ENGINES: ClassVar[tuple[str, ...]] = ("auto", "numba", "step")
    _theorem: ClassVar[str] = "Theorem 4"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.engine == "numba" and not HAVE_NUMBA:
            raise ValueError("engine 'numba' needs numba (pip install dpaudit[fast]); use 'auto' or 'step'")

    @property
    def name(self) -> str:
        return "lazy-dp-ts" + self._suffix()

    def agent(self, run: RunContext) -> LazyDPTSAgent:
        return LazyDPTSAgent(self, run)


class LazyDPTSAgent(LazyAgent):
    """Lazy-DP-TS for R repetitions: the step loop, or the compiled per-repetition kernel."""

    def select(self, t: int) -> np.ndarray:
        if t < self.n_arms:
            return np.full(self.reps, t, dtype=np.intp)
        L = BONUS * self.logt[t]
        mb = np.clip(self.mu + L / (self.eps * self.O), 0.0, 1.0)
        theta = self.run.random.beta(mb * self.O + 1.0, (1.0 - mb) * self.O + 1.0)
        return self._argmax(theta)

    def _fast(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        short = self.policy.engine == "auto" and not worth_compiling(self.reps * self.horizon)
        transcripts = self.run.ledgers.transcripts is not None  # the kernel keeps no transcript
        if not HAVE_NUMBA or short or transcripts:
            return self._step(t0, t1, table)
        C = t1 - t0
        actions = np.empty((self.reps, C), dtype=np.intp)
        rel_round = np.empty(C, dtype=np.int64)
        rel_arm = np.empty(C, dtype=np.int64)
        tab = np.ascontiguousarray(table, dtype=float)
        for r, g in enumerate(self.run.random.generators):
            n = lazy_ts_chunk(
                g,
                t0,
                C,
                tab[r],
                self.logt,
                self.mu[r],
                self.O[r],
                self.ep[r],
                self.N[r],
                self.Phi[r],
                self.Z[r],
                self.b,
                self.eps,
                BONUS,
                self.perm[r],
                actions[r],
                rel_round,
                rel_arm,
            )
            for k in range(n):
                self._rel.append((np.array([r]), np.array([int(rel_arm[k])]), int(rel_round[k])))
        return actions
