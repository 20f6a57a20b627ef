"""Bandit policies, vectorised across repetitions.

A *policy* is a small immutable configuration (:class:`GaussianTS`, :class:`BetaTS`,
:class:`UCB1`). :meth:`Policy.agent` turns it into an :class:`Agent` that holds the state of
R independent repetitions as arrays of shape (R, N) and offers three operations:

* ``prepare(t0, t1)`` — pre-draw the policy randomness of rounds ``t0 .. t1-1`` (each
  repetition from its *own* generator, so results do not depend on how repetitions are
  grouped);
* ``select(t) -> arms`` (shape (R,));
* ``update(t, arms, rewards)``.

``Agent.run_chunk`` plays a block of rounds against a reward table with that plain
per-round loop. :class:`GaussianTS` overrides it with an exact *speculative* engine (see
:meth:`GaussianTSAgent.run_chunk`), which gives bit-identical actions several times faster.

Rounds are 0-based: round ``t`` is the (t+1)-th decision.

Example:
    >>> import numpy as np
    >>> pol = GaussianTS(b=2, c=4.0)
    >>> agent = pol.agent(3, 10, np.random.SeedSequence(0).spawn(2))
    >>> agent.run_chunk(0, 6, np.zeros((2, 6, 3)))[0].tolist()  # pre-pull: arm 0 twice, ...
    [0, 0, 1, 1, 2, 2]
    >>> pol.per_round_mu(10, 3).round(3).tolist()[5:]
    [0.0, 0.289, 0.289, 0.289, 0.289]
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dpaudit.events import (
    GaussianReportNoisyMaxEvent,
    NoOpEvent,
    PrivacyEvent,
    check_positive,
)

__all__ = [
    "Policy",
    "Agent",
    "GaussianTS",
    "GaussianTSAgent",
    "play_gaussian_ts_together",
    "BetaTS",
    "UCB1",
]


def _generators(seeds: Sequence[np.random.SeedSequence]) -> list[np.random.Generator]:
    return [np.random.Generator(np.random.PCG64(s)) for s in seeds]


class Agent(abc.ABC):
    """Mutable per-run state of a policy for R repetitions (arrays of shape (R, N))."""

    def __init__(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.n_arms = int(n_arms)
        self.horizon = int(horizon)
        self.n_reps = len(seeds)
        self._rows = np.arange(self.n_reps)
        self._offsets = self._rows * self.n_arms

    def prepare(self, t0: int, t1: int) -> None:
        """Pre-draw the randomness of rounds ``t0 .. t1-1`` (default: none)."""
        return None

    @abc.abstractmethod
    def select(self, t: int) -> np.ndarray:
        """The arms pulled in round ``t``, shape (R,)."""

    @abc.abstractmethod
    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        """Observe ``rewards`` (shape (R,)) of the ``arms`` pulled in round ``t``."""

    def run_chunk(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        """Play rounds ``t0 .. t1-1`` against ``table`` (shape (R, t1−t0, N)); return the arms
        pulled, shape (R, t1−t0)."""
        self.prepare(t0, t1)
        actions = np.empty((self.n_reps, t1 - t0), dtype=np.intp)
        self._step_loop(t0, 0, table, actions)
        return actions

    def _step_loop(self, t0: int, k0: int, table: np.ndarray, actions: np.ndarray) -> None:
        rows = self._rows
        for k in range(k0, table.shape[1]):
            arms = self.select(t0 + k)
            self.update(t0 + k, arms, table[rows, k, arms])
            actions[:, k] = arms


@dataclass(frozen=True)
class Policy(abc.ABC):
    """Base class of policy configurations (immutable, picklable)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """A short label for tables and progress bars."""

    @abc.abstractmethod
    def agent(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> Agent:
        """A fresh agent for ``len(seeds)`` repetitions; ``seeds[r]`` seeds repetition r's
        policy randomness."""

    def privacy_events(self, horizon: int, n_arms: int) -> PrivacyEvent | None:
        """The releases made by the policy about the reward stream (None: not private)."""
        return None


# ---------------------------------------------------------------------------------------
# Gaussian-prior Thompson sampling (seed 004, Algorithms 1 and 2)


@dataclass(frozen=True)
class GaussianTS(Policy):
    """Thompson sampling with Gaussian priors and the (b, c) modification (seed 004, Alg. 2).

    Pre-pull every arm ``b`` times (arm 0 b times, then arm 1, ...); afterwards sample
    θ_i ~ N(μ̂_i, c/(n_i+1)), μ̂_i = S_i/(n_i+1), and play argmax θ. ``b=0, c=1`` is
    Algorithm 1. ``engine="speculative"`` (default) and ``engine="step"`` give identical
    actions; the first is faster.

    >>> GaussianTS().name, GaussianTS(b=3, c=2.0).name
    ('gaussian-ts', 'gaussian-ts(b=3,c=2)')
    >>> GaussianTS(c=0.5)
    Traceback (most recent call last):
    ...
    ValueError: c must be in [1, inf), got 0.5
    """

    b: int = 0
    c: float = 1.0
    engine: str = "speculative"

    def __post_init__(self) -> None:
        if isinstance(self.b, bool) or not isinstance(self.b, (int, np.integer)) or self.b < 0:
            raise ValueError(f"b must be an integer >= 0, got {self.b!r}")
        object.__setattr__(self, "b", int(self.b))
        c = check_positive("c", self.c)
        if c < 1.0 or math.isinf(c):
            raise ValueError(f"c must be in [1, inf), got {self.c!r}")
        object.__setattr__(self, "c", c)
        if self.engine not in ("speculative", "step"):
            raise ValueError(f"engine must be 'speculative' or 'step', got {self.engine!r}")

    @property
    def name(self) -> str:
        if self.b == 0 and self.c == 1.0:
            return "gaussian-ts"
        return f"gaussian-ts(b={self.b},c={self.c:g})"

    def agent(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> GaussianTSAgent:
        return GaussianTSAgent(self, n_arms, horizon, seeds)

    # -- privacy ---------------------------------------------------------------------------
    def per_round_mu(self, horizon: int, n_arms: int) -> np.ndarray:
        """Worst-case per-round ratio sensitivity/σ, shape (T,).

        Pre-pull rounds release nothing (0). In a sampling round the changed reward sits in
        one arm j with n_j ≥ max(b, 1) observations, so μ̂_j moves by ≤ 1/(n_j+1) while
        σ_j = sqrt(c/(n_j+1)): ratio 1/sqrt(c(n_j+1)) ≤ 1/sqrt(c(max(b,1)+1)).
        """
        pre = min(self.b * n_arms, horizon)
        out = np.zeros(horizon)
        out[pre:] = 1.0 / math.sqrt(self.c * (max(self.b, 1) + 1))
        return out

    def paper_gdp_mu(self, horizon: int) -> float:
        """The GDP parameter stated by seed 004: sqrt(T/2) for (b, c) = (0, 1) (Theorem 3),
        sqrt(T/(c(b+1))) otherwise (Theorem 4)."""
        if self.b == 0 and self.c == 1.0:
            return math.sqrt(horizon / 2.0)
        return math.sqrt(horizon / (self.c * (self.b + 1)))

    def privacy_events(self, horizon: int, n_arms: int) -> PrivacyEvent:
        """Each sampling round is a Gaussian report-noisy-max release with worst-case
        sensitivities 1/(n+1) and noise σ = sqrt(c/(n+1)), n = max(b, 1); pre-pull rounds are
        data-independent. (GDP of the result: sqrt((T − bN)/(c(max(b,1)+1))).)

        >>> ev = GaussianTS().privacy_events(100, 5)
        >>> ev.num_releases, round(ev.event.mu, 4)
        (100, 0.7071)
        """
        k = horizon - min(self.b * n_arms, horizon)
        if k == 0:
            return NoOpEvent()
        n = max(self.b, 1)
        rnm = GaussianReportNoisyMaxEvent(
            sensitivities=(1.0 / (n + 1),) * n_arms, sigmas=(math.sqrt(self.c / (n + 1)),) * n_arms
        )
        return rnm.repeat(k)

    def round_ratios(self, actions: np.ndarray, tau: int, n_arms: int) -> np.ndarray:
        """Data-dependent per-round ratios for one run: the reward of round ``tau`` (0-based)
        is changed; it belongs to arm j = actions[tau]; round t > tau (sampling) has ratio
        1/sqrt(c(n_j(t)+1)) where n_j(t) counts arm j's pulls before t. Shape (T,).

        >>> GaussianTS().round_ratios(np.array([0, 1, 0, 0]), 0, 2).round(3).tolist()
        [0.0, 0.707, 0.707, 0.577]
        """
        a = np.asarray(actions).reshape(-1)
        if not (0 <= tau < a.size):
            raise ValueError(f"tau must be in [0, {a.size - 1}], got {tau!r}")
        j = a[tau]
        nj = np.concatenate([[0], np.cumsum(a == j)[:-1]])
        out = 1.0 / np.sqrt(self.c * (nj + 1.0))
        out[: max(tau + 1, min(self.b * n_arms, a.size))] = 0.0
        return out


class GaussianTSAgent(Agent):
    """State S (reward sums) and n (counts), shape (R, N); noise Z pre-drawn per chunk."""

    _KS = (16, 32, 64, 128, 256, 512)  # speculation lengths (powers of two: cached views)

    def __init__(
        self, policy: GaussianTS, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]
    ) -> None:
        super().__init__(n_arms, horizon, seeds)
        self.policy = policy
        self._rngs = _generators(seeds)
        self._sqrtc = math.sqrt(policy.c)
        shape = (self.n_reps, self.n_arms)
        self.S = np.zeros(shape)
        self.n = np.zeros(shape)
        self._mu = np.zeros(shape)
        self._scale = np.full(shape, self._sqrtc)
        self._theta = np.empty(shape)
        self._Z = np.empty((self.n_reps, 0, self.n_arms))
        self._t0 = 0
        self._prepull_end = min(policy.b * self.n_arms, self.horizon)
        self._K = 64
        self._speculating = True

    _MIN_ADVANCE = 6

    def prepare(self, t0: int, t1: int) -> None:
        # Z[r, k, i]: repetition r's (t1-t0, N) draw, written in place (chunking-invariant)
        Z = np.empty((self.n_reps, t1 - t0, self.n_arms))
        for r, g in enumerate(self._rngs):
            g.standard_normal(out=Z[r])
        self._Z = Z
        self._t0 = t0

    def select(self, t: int) -> np.ndarray:
        if t < self._prepull_end:
            return np.full(self.n_reps, t // self.policy.b, dtype=np.intp)
        th = np.multiply(self._Z[:, t - self._t0], self._scale, out=self._theta)
        th += self._mu
        return th.argmax(axis=1)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        idx = self._offsets + arms
        S, n = self.S.reshape(-1), self.n.reshape(-1)
        S[idx] += rewards
        n[idx] += 1.0
        n1 = n[idx] + 1.0
        self._mu.reshape(-1)[idx] = S[idx] / n1
        self._scale.reshape(-1)[idx] = self._sqrtc / np.sqrt(n1)

    # -- fast path -------------------------------------------------------------------------
    def _prepull(self, t0: int, t1: int, table: np.ndarray, actions: np.ndarray) -> int:
        """Play the deterministic pre-pull rounds inside [t0, t1); return the first other round."""
        b, end = self.policy.b, min(t1, self._prepull_end)
        t = t0
        while t < end:
            arm = t // b
            stop = min(end, (arm + 1) * b)
            blk = np.empty((self.n_reps, stop - t + 1))
            blk[:, 0] = self.S[:, arm]
            blk[:, 1:] = table[:, t - t0 : stop - t0, arm]
            self.S[:, arm] = np.cumsum(blk, axis=1)[:, -1]  # sequential sums, as in the step loop
            self.n[:, arm] += stop - t
            actions[:, t - t0 : stop - t0] = arm
            t = stop
        return t

    def run_chunk(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        """Exact speculative execution of rounds ``t0 .. t1-1``.

        Per repetition, guess that the arm with the highest posterior mean ("leader") is
        played for the next K rounds; compute the samples θ of that hypothetical path for
        all K rounds at once (only the leader's statistics move: a running sum of its
        rewards), and accept the rounds before the first one in which another arm's θ
        reaches the leader's, plus that round itself (its state is exact, so its argmax is
        too). Repetitions advance at their own pace. The arithmetic is the one of
        :meth:`select`/:meth:`update`, so the actions are bit-identical to the step loop
        (tested); the gain is that Python overhead is paid per deviation, not per round.

        When the policy explores a lot (large c), runs between deviations are short and the
        plain step loop is cheaper: speculation is abandoned mid-chunk if it advances fewer
        than ``_MIN_ADVANCE`` rounds per repetition and iteration, and the next chunk uses it
        only if the arm switched in fewer than 1/``_MIN_ADVANCE`` of this chunk's rounds.
        Both paths give the same actions, so this only affects speed.
        """
        self.prepare(t0, t1)
        return self.play(t0, t1, table)

    def use_noise(self, t0: int, Z: np.ndarray) -> None:
        """Use ``Z`` (shape (R, C, N), read only) as the pre-drawn noise of rounds ``t0 ..
        t0+C-1`` instead of drawing it (:meth:`prepare`); ``Z[r]`` must be what repetition r's
        generator would draw, e.g. shared by several agents with the same seeds."""
        self._Z = Z
        self._t0 = t0

    def play(self, t0: int, t1: int, table: np.ndarray) -> np.ndarray:
        """:meth:`run_chunk` with the noise already in place (:meth:`prepare`/:meth:`use_noise`)."""
        C, R = t1 - t0, self.n_reps
        actions = np.empty((R, C), dtype=np.intp)
        if self.policy.engine == "step":
            self._step_loop(t0, 0, table, actions)
            return actions
        start = self._prepull(t0, t1, table, actions) if t0 < self._prepull_end else t0
        k = start - t0
        if k < C:
            if self._speculating:
                k = self._speculate(k, C, table, actions)
            if k < C:
                self._refresh()
                self._step_loop(t0, k, table, actions)
            self._choose_engine(t0, actions)
        self._refresh()
        return actions

    def _choose_engine(self, t0: int, actions: np.ndarray) -> None:
        """Speculate in the next chunk only if the sampling rounds of this one (actions of
        rounds t0 ..) switched arm in fewer than 1/``_MIN_ADVANCE`` of the rounds."""
        a = actions[:, max(self._prepull_end - t0, 0) :]
        if a.shape[1] > 1:
            switches = np.count_nonzero(a[:, 1:] != a[:, :-1])
            self._speculating = bool(switches * self._MIN_ADVANCE < a.size)

    def _refresh(self) -> None:
        """Recompute the step-loop caches μ̂ = S/(n+1), scale = sqrt(c)/sqrt(n+1)."""
        n1 = self.n + 1.0
        np.divide(self.S, n1, out=self._mu)
        np.divide(self._sqrtc, np.sqrt(n1), out=self._scale)

    def _speculate(self, k0: int, C: int, table: np.ndarray, actions: np.ndarray) -> int:
        """Speculate from local round k0; return the local round from which the (synchronised)
        step loop must continue (C if the chunk is done)."""
        R, N, sqrtc = self.n_reps, self.n_arms, self._sqrtc
        S, n = self.S, self.n
        kmax = self._KS[-1]
        # arm-major, time-padded copies so that K consecutive rounds are one strided window
        Zp = np.zeros((R, N, C + kmax))
        Zp[:, :, :C] = self._Z.transpose(0, 2, 1)
        Tp = np.zeros((R, N, C + kmax))
        Tp[:, :, :C] = table.transpose(0, 2, 1)
        win: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        p = np.full(R, k0)
        seg_rep, seg_start, seg_len, seg_arm = [], [], [], []
        dev_rep, dev_t, dev_arm = [], [], []
        o = np.arange(N - 1)[None, :]
        aranges = np.arange(max(R, self._KS[-1]) + 1)
        K = self._K
        act = np.arange(R)
        it, last = 0, int(p.sum())
        aborted = False
        while True:
            if act.size < R or p.max() >= C:
                act = np.flatnonzero(p < C)
            A = act.size
            if A == 0:
                break
            if K not in win:
                win[K] = (sliding_window_view(Zp, K, axis=2), sliding_window_view(Tp, K, axis=2))
            ar = aranges[:A]
            kk = aranges[:K]
            pa = p[act]
            Sa, na = S[act], n[act]
            na1 = na + 1.0
            mu = Sa / na1
            sc = sqrtc / np.sqrt(na1)
            lead = mu.argmax(axis=1)
            others = o + (o >= lead[:, None])  # (A, N-1)
            Zw, Tw = win[K]
            # the other arms' samples over the window, and their maximum
            th = Zw[act[:, None], others, pa[:, None]]  # (A, N-1, K)
            arc = ar[:, None]
            th *= sc[arc, others][:, :, None]
            th += mu[arc, others][:, :, None]
            mx = th.max(axis=1)
            # the leader's samples if it is pulled at every round of the window
            cs = np.empty((A, K + 1))
            cs[:, 0] = Sa[ar, lead]
            cs[:, 1:] = Tw[act, lead, pa]
            np.cumsum(cs, axis=1, out=cs)  # cs[:, k] = leader's sum before the k-th round
            nl1 = na[ar, lead][:, None] + kk + 1.0
            thl = Zw[act, lead, pa] * (sqrtc / np.sqrt(nl1))
            thl += cs[:, :K] / nl1
            stop = mx >= thl
            if pa.max() + K > C:
                stop |= (pa[:, None] + kk) >= C
            m = np.where(stop.any(axis=1), stop.argmax(axis=1), K)
            # accept m pulls of the leader
            S[act, lead] = cs[ar, m]
            n[act, lead] += m
            seg_rep.append(act)
            seg_start.append(pa)
            seg_len.append(m)
            seg_arm.append(lead)
            # the stopping round, if inside the chunk: exact argmax, as in select()
            td = pa + m
            d = np.flatnonzero((m < K) & (td < C))
            if d.size:
                rd, td = act[d], td[d]
                n1 = n[rd] + 1.0
                row = Zp[rd, :, td] * (sqrtc / np.sqrt(n1))
                row += S[rd] / n1
                armd = row.argmax(axis=1)
                S[rd, armd] += Tp[rd, armd, td]
                n[rd, armd] += 1.0
                dev_rep.append(rd)
                dev_t.append(td)
                dev_arm.append(armd)
                p[rd] += 1
            p[act] += m
            # adapt the window to the typical run between deviations
            typical = 2 * int(m.sum()) // A
            K = next((k for k in self._KS if k >= typical), self._KS[-1])
            it += 1
            if it % 32 == 0:
                now = int(np.minimum(p, C).sum())
                if now - last < self._MIN_ADVANCE * 32 * A:
                    aborted = True
                    break
                last = now
        self._K = K
        # write the accepted runs and the stopping rounds into `actions`
        ones = [np.ones(len(x), dtype=np.intp) for x in dev_rep]
        rep = np.concatenate(seg_rep + dev_rep)
        lens = np.concatenate(seg_len + ones)
        first = np.concatenate(seg_start + dev_t) + rep * C
        ends = np.cumsum(lens)
        pos = np.repeat(first - (ends - lens), lens) + np.arange(int(ends[-1]) if ends.size else 0)
        actions.reshape(-1)[pos] = np.repeat(np.concatenate(seg_arm + dev_arm), lens)
        if not aborted:
            return C
        # bring the repetitions that lag behind up to the leader, one masked round at a time
        self._refresh()
        kmax = int(p.max())
        Z, mu, scale = self._Z, self._mu.reshape(-1), self._scale.reshape(-1)
        Sf, nf = S.reshape(-1), n.reshape(-1)
        for k in range(int(p.min()), kmax):
            live = np.flatnonzero(p <= k)
            th = Z[live, k] * self._scale[live]
            th += self._mu[live]
            arm = th.argmax(axis=1)
            idx = live * N + arm
            Sf[idx] += table[live, k, arm]
            nf[idx] += 1.0
            n1 = nf[idx] + 1.0
            mu[idx] = Sf[idx] / n1
            scale[idx] = sqrtc / np.sqrt(n1)
            actions[live, k] = arm
        return kmax


def play_gaussian_ts_together(
    agents: Sequence[GaussianTSAgent], t0: int, t1: int, table: np.ndarray, Z: np.ndarray
) -> list[np.ndarray]:
    """Play rounds ``t0 .. t1-1`` of several Gaussian-TS agents (any (b, c), the same R
    repetitions) in one step loop over stacked rows (agent × repetition); return each agent's
    actions, shape (R, t1−t0).

    All agents see the same reward ``table`` (R, t1−t0, N) and the same noise ``Z`` (R, t1−t0, N)
    — common random numbers: Z[r] is what repetition r's generator draws for the chunk, whatever
    the policy, so one draw serves every agent. Per row the arithmetic is that of
    :meth:`GaussianTSAgent.select`/:meth:`GaussianTSAgent.update` (with that row's b and
    sqrt(c)), so each agent's actions and state are bit-identical to playing it alone (tested);
    the gain is that the per-round Python overhead is paid once for all agents. Use it for agents
    whose speculation would fail (heavy exploration); the engine choice of each agent for its
    next chunk is updated as :meth:`GaussianTSAgent.run_chunk` would.
    """
    if not agents:
        return []
    R, C, N = table.shape
    K = len(agents)
    if any(a.n_reps != R or a.n_arms != N for a in agents):
        raise ValueError("agents must have the table's repetitions and arms")
    rows = K * R
    S = np.concatenate([a.S for a in agents])  # (K·R, N), row k·R + r
    n = np.concatenate([a.n for a in agents])
    sqrtc = np.repeat(np.array([a._sqrtc for a in agents]), R)  # (K·R,)
    n1 = n + 1.0
    mu = S / n1
    scale = sqrtc[:, None] / np.sqrt(n1)
    Sf, nf, muf, scf = S.reshape(-1), n.reshape(-1), mu.reshape(-1), scale.reshape(-1)
    mu3, scale3 = mu.reshape(K, R, N), scale.reshape(K, R, N)
    th = np.empty((rows, N))
    th3 = th.reshape(K, R, N)
    Zt = np.ascontiguousarray(Z.transpose(1, 0, 2))  # (C, R, N): round k is one block
    Tt = np.ascontiguousarray(table.transpose(1, 0, 2)).reshape(C, R * N)
    offs = np.arange(rows) * N
    roffs = np.tile(np.arange(R) * N, K)  # the row's repetition in a (R, N) table block
    # pre-pull rows (round t < b·N) play arm t // b
    pend = np.repeat(np.array([a._prepull_end for a in agents]), R)
    bs = np.repeat(np.array([max(a.policy.b, 1) for a in agents]), R)
    pmax = min(int(pend.max()), t1)
    actions = np.empty((rows, C), dtype=np.intp)
    for k in range(C):
        t = t0 + k
        np.multiply(Zt[k], scale3, out=th3)
        th3 += mu3
        arms = th.argmax(axis=1)
        if t < pmax:
            pp = np.flatnonzero(pend > t)
            arms[pp] = t // bs[pp]
        idx = offs + arms
        s_new = Sf[idx] + Tt[k].take(roffs + arms)  # S[idx] += reward, as in update()
        n_new = nf[idx] + 1.0
        Sf[idx] = s_new
        nf[idx] = n_new
        n1 = n_new + 1.0
        muf[idx] = s_new / n1
        scf[idx] = sqrtc / np.sqrt(n1)
        actions[:, k] = arms
    out = []
    for i, a in enumerate(agents):
        a.S[...] = S[i * R : (i + 1) * R]
        a.n[...] = n[i * R : (i + 1) * R]
        a._refresh()
        act = actions[i * R : (i + 1) * R]
        if t1 > a._prepull_end:
            a._choose_engine(t0, act)
        out.append(act)
    return out


# ---------------------------------------------------------------------------------------
# reference (non-private) policies


@dataclass(frozen=True)
class BetaTS(Policy):
    """Beta-Bernoulli Thompson sampling (Agrawal & Goyal 2012) with the Bernoulli-trial trick:
    a reward r ∈ [0, 1] counts as a success with probability r. Not private.

    >>> BetaTS().name
    'beta-ts'
    """

    @property
    def name(self) -> str:
        return "beta-ts"

    def agent(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> Agent:
        return _BetaTSAgent(n_arms, horizon, seeds)


class _BetaTSAgent(Agent):
    def __init__(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> None:
        super().__init__(n_arms, horizon, seeds)
        pairs = [s.spawn(2) for s in seeds]  # (posterior draws, Bernoulli-trial uniforms)
        self._beta_rngs = _generators([p[0] for p in pairs])
        self._trial_rngs = _generators([p[1] for p in pairs])
        self.alpha = np.ones((self.n_reps, self.n_arms))
        self.beta = np.ones((self.n_reps, self.n_arms))
        self._theta = np.empty((self.n_reps, self.n_arms))
        self._U = np.empty((0, self.n_reps))
        self._t0 = 0

    def prepare(self, t0: int, t1: int) -> None:
        self._U = np.stack([g.random(t1 - t0) for g in self._trial_rngs], axis=1)  # (C, R)
        self._t0 = t0

    def select(self, t: int) -> np.ndarray:
        th = self._theta
        for r, g in enumerate(self._beta_rngs):
            th[r] = g.beta(self.alpha[r], self.beta[r])
        return th.argmax(axis=1)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        idx = self._offsets + arms
        win = (self._U[t - self._t0] < rewards).astype(float)
        self.alpha.reshape(-1)[idx] += win
        self.beta.reshape(-1)[idx] += 1.0 - win


@dataclass(frozen=True)
class UCB1(Policy):
    """UCB1 (Auer, Cesa-Bianchi & Fischer 2002): pull each arm once, then
    argmax_i S_i/n_i + sqrt(alpha · ln t / n_i) with t the number of rounds played. Not private,
    deterministic.

    >>> UCB1().name, UCB1(alpha=1.0).name
    ('ucb1', 'ucb1(alpha=1)')
    """

    alpha: float = 2.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_positive("alpha", self.alpha))

    @property
    def name(self) -> str:
        return "ucb1" if self.alpha == 2.0 else f"ucb1(alpha={self.alpha:g})"

    def agent(self, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]) -> Agent:
        return _UCB1Agent(self.alpha, n_arms, horizon, seeds)


class _UCB1Agent(Agent):
    def __init__(
        self, alpha: float, n_arms: int, horizon: int, seeds: Sequence[np.random.SeedSequence]
    ) -> None:
        super().__init__(n_arms, horizon, seeds)
        self.alpha = alpha
        self.S = np.zeros((self.n_reps, self.n_arms))
        self.n = np.zeros((self.n_reps, self.n_arms))

    def select(self, t: int) -> np.ndarray:
        if t < self.n_arms:
            return np.full(self.n_reps, t, dtype=np.intp)
        idx = self.S / self.n + np.sqrt(self.alpha * math.log(t) / self.n)
        return idx.argmax(axis=1)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        i = self._offsets + arms
        self.S.reshape(-1)[i] += rewards
        self.n.reshape(-1)[i] += 1.0
