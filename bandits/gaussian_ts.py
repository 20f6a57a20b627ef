"""Thompson sampling with Gaussian priors and the (b, c) modification (seed 004, Algorithms 1–2).

:class:`GaussianTS` is the configuration; :class:`GaussianTSAgent` plays R repetitions at once,
by default with an exact *speculative* engine (bit-identical to the plain per-round loop, several
times faster); :func:`play_gaussian_ts_together` plays many configurations in one step loop
(the tuner). The privacy analysis lives in :mod:`dpaudit.thompson` (one source of truth):
:meth:`GaussianTS.declare` returns it as the run's declaration, and every agent records in each
repetition's ledger the report-noisy-max releases it really made, with the noise it really used.

Example:
    >>> import numpy as np
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.policy import Outcomes, RunContext
    >>> pol = GaussianTS(b=2, c=4.0)
    >>> run = RunContext.create(BernoulliEnv((0.5, 0.5, 0.5)), 10, np.random.SeedSequence(0).spawn(2))
    >>> agent = pol.agent(run)
    >>> agent.run_chunk(0, 6, Outcomes(np.zeros((2, 6, 3)), pol.feedback))[0].tolist()  # pre-pulls
    [0, 0, 1, 1, 2, 2]
    >>> pol.config(10, 3).private_rounds, round(pol.config(10, 3).per_round_mu, 4)  # 1/sqrt(c(b+1))
    (4, 0.2887)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from bandits import _fast
from bandits.actions import ActionStructure
from bandits.policy import Agent, Outcomes, Policy, RunContext
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import GaussianReportNoisyMaxEvent, Neighbouring, check_positive
from dpaudit.thompson import ThompsonConfig
from mechanisms.randomness import RepRandom

__all__ = ["GaussianTS", "GaussianTSAgent", "SharedNoise", "play_gaussian_ts_together"]


@dataclass(frozen=True)
class GaussianTS(Policy):
    """Thompson sampling with Gaussian priors and the (b, c) modification (seed 004, Alg. 2).

    Pre-pull every arm ``b`` times (arm 0 b times, then arm 1, ...); afterwards sample
    θ_i ~ N(μ̂_i, c/(n_i+1)), μ̂_i = S_i/(n_i+1), and play argmax θ. ``b=0, c=1`` is
    Algorithm 1. The engines give identical actions (tested): ``"speculative"`` (default)
    guesses runs of the leader and plays the rounds where that fails with the per-repetition
    round loop; ``"kernel"`` plays every sampling round with that loop (fastest when the arms
    are close and every guess would fail: the audit's tied designs); ``"step"`` is the plain
    NumPy step loop over all repetitions at once (the reference). The per-repetition loop is
    compiled with numba when it is installed (:func:`bandits._fast.gaussian_ts_rounds`, the
    ``fast`` extra; ``DPAUDIT_NUMBA=0`` disables it), else it is the NumPy step loop.

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
        if self.engine not in ("speculative", "kernel", "step"):
            raise ValueError(f"engine must be 'speculative', 'kernel' or 'step', got {self.engine!r}")

    @property
    def name(self) -> str:
        if self.b == 0 and self.c == 1.0:
            return "gaussian-ts"
        return f"gaussian-ts(b={self.b},c={self.c:g})"

    def agent(self, run: RunContext) -> GaussianTSAgent:
        return GaussianTSAgent(self, run)

    def config(self, horizon: int, n_arms: int) -> ThompsonConfig:
        """The privacy analysis of this (b, c) at (T, N) (:class:`dpaudit.thompson.ThompsonConfig`)."""
        return ThompsonConfig(horizon, n_arms, self.b, self.c)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        """Each sampling round that can see the changed reward is a Gaussian report-noisy-max
        release (worst case: the changed arm keeps its smallest count, n = max(b, 1)); pre-pull
        rounds are data-independent. One source of truth: :class:`dpaudit.thompson.ThompsonConfig`.

        >>> d = GaussianTS().declare(100, 5)
        >>> d.event.num_releases, d.unit, d.published.source
        (99, 'one reward', 'seed 004, Theorem 3')
        """
        cfg = self.config(horizon, n_arms)
        mu, source = cfg.published_mu
        return Declaration(
            event=cfg.event(),
            unit="one reward",
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(source, mu=mu, note="GDP of the whole action sequence"),
            note=f"mu = sqrt({cfg.private_rounds}/(c(max(b,1)+1))): {cfg.private_rounds} rounds can see the "
            "changed reward, each post-processing one Gaussian coordinate (dpaudit.thompson)",
        )


class GaussianTSAgent(Agent):
    """State S (reward sums) and n (counts), shape (R, N); noise Z pre-drawn per chunk.

    Noise layout: repetition r's stream of N-vectors of standard normals starts at the first
    *sampling* round b·N (the deterministic pre-pull rounds draw nothing), so the k-th sampling
    round uses the k-th vector of the stream, whatever the chunking. ``_Z[:, k]`` is the noise
    of round ``_zoff + k``.
    """

    _KS = (16, 32, 64, 128, 256, 512)  # speculation lengths (powers of two: cached views)

    def __init__(self, policy: GaussianTS, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        self._sqrtc = math.sqrt(policy.c)
        shape = (self.reps, self.n_arms)
        self.S = np.zeros(shape)
        self.n = np.zeros(shape)
        self._mu = np.zeros(shape)
        self._scale = np.full(shape, self._sqrtc)
        self._theta = np.empty(shape)
        self._scale_lut = np.empty(0)
        self._Z = np.empty((self.reps, 0, self.n_arms))
        self._zbuf = self._Z
        self._t0 = 0
        self._prepull_end = min(policy.b * self.n_arms, self.horizon)
        self._zoff = self._prepull_end  # the round whose noise is _Z[:, 0]
        self._K = 64
        self._speculating = True
        self._offsets = self.rows * self.n_arms
        # the first round whose action can depend on a reward: after the pre-pulls (b >= 1),
        # after round 0 (b = 0)
        self._first_private = max(self._prepull_end, 0 if policy.b else 1)

    _MIN_ADVANCE = 6
    _SPEC_MEMORY = 64 * 2**20  # the speculative engine's padded copies; above it, the round loop

    def _spec_bytes(self, C: int) -> int:
        """Bytes of the speculative engine's two time-padded (R, N, C + 512) copies."""
        return 16 * self.reps * self.n_arms * (C + self._KS[-1])

    def prepare(self, t0: int, t1: int) -> None:
        # Z[r, k, i]: repetition r's draw for the chunk's sampling rounds max(t0, b·N) .. t1-1,
        # written in place; pre-pull rounds draw nothing (chunking-invariant stream)
        start = max(t0, self._prepull_end)
        C = max(0, t1 - start)
        gens = getattr(self.run.random, "generators", None)
        if C == 0:  # a pre-pull chunk draws nothing: skip R empty generator calls (≈ 0.5 µs each)
            self._Z = self._zbuf[:, :0]
        elif gens is None:
            self._Z = self.run.random.standard_normal((C, self.n_arms))
        else:  # RepRandom.standard_normal into a buffer kept across chunks (no fresh pages per chunk)
            if self._zbuf.shape[1] < C:
                self._zbuf = np.empty((self.reps, C, self.n_arms))
            self._Z = self._zbuf[:, :C]
            for r, g in enumerate(gens):
                g.standard_normal(out=self._Z[r])
        self._t0 = t0
        self._zoff = start

    def noise_elements(self, t0: int, t1: int) -> tuple[int, int]:
        """The elements [e0, e1) of each repetition's noise stream used by rounds ``t0 .. t1-1``
        (element e is the noise of sampling round b·N + e)."""
        pe = self._prepull_end
        return max(t0, pe) - pe, max(t1, pe) - pe

    def select(self, t: int) -> np.ndarray:
        if t < self._prepull_end:
            return np.full(self.reps, t // self.policy.b, dtype=np.intp)
        th = np.multiply(self._Z[:, t - self._zoff], self._scale, out=self._theta)
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

    def _step_loop(self, t0: int, k0: int, table: np.ndarray, actions: np.ndarray) -> None:
        rows = self.rows
        for k in range(k0, table.shape[1]):
            arms = self.select(t0 + k)
            self.update(t0 + k, arms, table[rows, k, arms])
            actions[:, k] = arms

    # -- what is released --------------------------------------------------------------------
    def _record(self, t0: int, t1: int, n_start: np.ndarray) -> None:
        """Record the chunk's data-dependent rounds in each repetition's ledger.

        Each round is a Gaussian report-noisy-max over the arms: θ_i = μ̂_i + (√c/√(n_i+1))·Z_i,
        where a changed reward moves μ̂_j by at most 1/(n_j+1). The recorded event uses the
        scale the engines actually use (``_sqrtc``) and, as an upper bound for every round of
        the chunk, the smallest count m an arm holding data can have (counts only grow):
        m = max(b, 1) up to the first private round, else min_i max(n_i, 1) at the chunk start.
        """
        k = t1 - max(t0, self._first_private)
        if k <= 0:
            return
        if t0 < self._first_private:
            m = np.full(self.reps, max(self.policy.b, 1), dtype=np.int64)
        else:
            m = np.maximum(n_start, 1.0).min(axis=1).astype(np.int64)
        for mv in np.unique(m).tolist():
            n1 = mv + 1.0
            ev = GaussianReportNoisyMaxEvent(
                sensitivities=(1.0 / n1,) * self.n_arms, sigmas=(self._sqrtc / math.sqrt(n1),) * self.n_arms
            )
            self.run.ledgers.record(
                np.flatnonzero(m == mv),
                ev.repeat(k),
                units=None,
                label=f"rounds {max(t0, self._first_private)}..{t1 - 1}: argmax of posterior draws",
            )

    def shares_step_loop(self, t1: int, sampled: bool) -> bool:
        """Whether :func:`play_gaussian_ts_together` should play this agent's chunk ending at
        ``t1`` (heavy exploration: its speculation failed, or it has not sampled yet)."""
        return t1 > self._prepull_end and (
            self.policy.engine != "speculative" or not (sampled and self._speculating)
        )

    def samples_before(self, t1: int) -> bool:
        """Whether rounds before ``t1`` include sampling rounds (past the pre-pulls)."""
        return t1 > self._prepull_end

    # -- fast path -------------------------------------------------------------------------
    def _prepull(self, t0: int, t1: int, table: np.ndarray, actions: np.ndarray) -> int:
        """Play the deterministic pre-pull rounds inside [t0, t1); return the first other round."""
        b, end = self.policy.b, min(t1, self._prepull_end)
        t = t0
        while t < end:
            arm = t // b
            stop = min(end, (arm + 1) * b)
            acc = self.S[:, arm].copy()
            for k in range(t - t0, stop - t0):  # sequential sums, as in the step loop
                acc += table[:, k, arm]
            self.S[:, arm] = acc
            self.n[:, arm] += stop - t
            actions[:, t - t0 : stop - t0] = arm
            t = stop
        return t

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
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
        return self.play(t0, t1, outcomes.table)

    def use_noise(self, t0: int, Z: np.ndarray) -> None:
        """Use ``Z`` (shape (R, C, N), read only) as the pre-drawn noise of the sampling rounds
        ``max(t0, b·N) ..`` of the chunk starting at ``t0`` instead of drawing it
        (:meth:`prepare`); ``Z[r]`` must be the elements :meth:`noise_elements` of repetition
        r's stream, e.g. a view of a :class:`SharedNoise` shared by several agents."""
        self._Z = Z
        self._t0 = t0
        self._zoff = max(t0, self._prepull_end)

    def play(self, t0: int, t1: int, table: np.ndarray, speculate: bool = True) -> np.ndarray:
        """:meth:`run_chunk` with the noise already in place (:meth:`prepare`/:meth:`use_noise`);
        ``speculate=False`` skips the speculative engine for this chunk (same actions)."""
        C, R = t1 - t0, self.reps
        actions = np.empty((R, C), dtype=np.intp)
        self._record(t0, t1, self.n)
        if self.policy.engine == "step":
            self._step_loop(t0, 0, table, actions)
            return actions
        start = self._prepull(t0, t1, table, actions) if t0 < self._prepull_end else t0
        k = start - t0
        if k < C:
            p = np.full(R, k)
            if self.policy.engine == "speculative":
                if speculate and self._speculating and self._spec_bytes(C) <= self._SPEC_MEMORY:
                    p = self._speculate(k, C, table, actions)
                if p.min() < C:
                    self._rounds(t0, p, table, actions)
                self._choose_engine(t0, actions)
            else:
                self._rounds(t0, p, table, actions)
        self._refresh()
        return actions

    def _rounds(self, t0: int, p: np.ndarray, table: np.ndarray, actions: np.ndarray) -> None:
        """Play every repetition r from local round ``p[r]`` (a sampling round) to the chunk end
        with the arithmetic of :meth:`select`/:meth:`update`: the compiled per-repetition loop if
        numba is available (:func:`bandits._fast.gaussian_ts_rounds`), else :meth:`_catch_up`
        and the NumPy step loop. Both give the same actions and state, bit for bit (tested)."""
        C = actions.shape[1]
        if _fast.available():
            top = int(self.n.max()) + C + 1
            if self._scale_lut.size < top:  # sqrt(c)/sqrt(m + 1) for every reachable count m
                self._scale_lut = self._sqrtc / np.sqrt(np.arange(max(top, 2 * self._scale_lut.size)) + 1.0)
            _fast.gaussian_ts_rounds(self.S, self.n, self._Z, self._zoff - t0, table, p, self._scale_lut,
                                     actions)  # fmt: skip
            return
        k = self._catch_up(p, table, actions)
        if k < C:
            self._step_loop(t0, k, table, actions)

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

    def _speculate(self, k0: int, C: int, table: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Speculate from local round k0; return each repetition's local round from which the
        round loop (:meth:`_rounds`) must continue (C where the chunk is done)."""
        R, N, sqrtc = self.reps, self.n_arms, self._sqrtc
        S, n = self.S, self.n
        kmax = self._KS[-1]
        # arm-major, time-padded copies so that K consecutive rounds are one strided window
        # (the noise starts at the first sampling round of the chunk, local round `off`)
        off = self._zoff - self._t0
        Zp = np.zeros((R, N, C + kmax))
        Zp[:, :, off : off + self._Z.shape[1]] = self._Z.transpose(0, 2, 1)
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
            pa = p[act]
            lead, cs, m = self._leader_run(act, pa, K, C, win[K], o, ar, aranges[:K])
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
                armd = (Zp[rd, :, td] * (sqrtc / np.sqrt(n1)) + S[rd] / n1).argmax(axis=1)
                S[rd, armd] += Tp[rd, armd, td]
                n[rd, armd] += 1.0
                dev_rep.append(rd), dev_t.append(td), dev_arm.append(armd)
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
        ones = [np.ones(len(x), dtype=np.intp) for x in dev_rep]
        _write_runs(actions, C, seg_rep + dev_rep, seg_start + dev_t, seg_len + ones, seg_arm + dev_arm)
        return p if aborted else np.full(R, C)

    def _leader_run(
        self, act: np.ndarray, pa: np.ndarray, K: int, C: int, windows: tuple[np.ndarray, np.ndarray],
        o: np.ndarray, ar: np.ndarray, kk: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For repetitions ``act`` at local rounds ``pa``: the leader (highest posterior mean), its
        running sums ``cs`` if pulled at every round of the K-round window, and ``m``, the number
        of rounds before another arm's θ reaches the leader's (K if none; the chunk end stops too)."""
        S, n, sqrtc = self.S, self.n, self._sqrtc
        Zw, Tw = windows
        Sa, na = S[act], n[act]
        na1 = na + 1.0
        mu = Sa / na1
        sc = sqrtc / np.sqrt(na1)
        lead = mu.argmax(axis=1)
        others = o + (o >= lead[:, None])  # (A, N-1)
        # the other arms' samples over the window, and their maximum
        th = Zw[act[:, None], others, pa[:, None]]  # (A, N-1, K)
        arc = ar[:, None]
        th *= sc[arc, others][:, :, None]
        th += mu[arc, others][:, :, None]
        mx = th.max(axis=1)
        # the leader's samples if it is pulled at every round of the window
        cs = np.empty((act.size, K + 1))
        cs[:, 0] = Sa[ar, lead]
        cs[:, 1:] = Tw[act, lead, pa]
        np.cumsum(cs, axis=1, out=cs)  # cs[:, k] = leader's sum before the k-th round
        nl1 = na[ar, lead][:, None] + kk + 1.0
        thl = Zw[act, lead, pa] * (sqrtc / np.sqrt(nl1))
        thl += cs[:, :K] / nl1
        stop = mx >= thl
        if pa.max() + K > C:
            stop |= (pa[:, None] + kk) >= C
        return lead, cs, np.where(stop.any(axis=1), stop.argmax(axis=1), K)

    def _catch_up(self, p: np.ndarray, table: np.ndarray, actions: np.ndarray) -> int:
        """Bring the repetitions that lag behind (local round ``p``) up to the leader, one masked
        round at a time, with the arithmetic of :meth:`select`/:meth:`update`; return the round
        from which the synchronised step loop continues."""
        self._refresh()
        N, sqrtc, S, n = self.n_arms, self._sqrtc, self.S, self.n
        off = self._zoff - self._t0  # the noise starts at the chunk's first sampling round
        kmax = int(p.max())
        Z, mu, scale = self._Z, self._mu.reshape(-1), self._scale.reshape(-1)
        Sf, nf = S.reshape(-1), n.reshape(-1)
        for k in range(int(p.min()), kmax):
            live = np.flatnonzero(p <= k)
            th = Z[live, k - off] * self._scale[live]
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


class SharedNoise:
    """Gaussian-TS noise streams shared by several agents with the same repetition seeds.

    Element e of repetition r's stream is the N-vector of standard normals of the sampling
    round b·N + e of *any* (b, c) agent built from those seeds (:class:`GaussianTSAgent`), so
    one draw serves every agent (common random numbers); agents with different b read
    different elements at the same round. The buffer is element-major, shape (L, R, N),
    holding elements [lo, lo + L); :meth:`ensure` draws up to an element, :meth:`release`
    forgets the ones no agent needs any more.

    >>> import numpy as np
    >>> from mechanisms.randomness import RepRandom
    >>> seeds = [np.random.SeedSequence(1, spawn_key=(r,)) for r in range(2)]
    >>> tape = SharedNoise(RepRandom(seeds), 3)
    >>> tape.ensure(5); tape.release(2); tape.ensure(7)
    >>> whole = RepRandom(seeds).standard_normal((7, 3))
    >>> bool((tape.window(2, 7) == whole[:, 2:7]).all())
    True
    """

    def __init__(self, random: RepRandom, n_arms: int) -> None:
        self.random = random
        self.n_arms = int(n_arms)
        self.lo = 0
        self.buf = np.empty((0, len(random), self.n_arms))

    @property
    def hi(self) -> int:
        return self.lo + self.buf.shape[0]

    def ensure(self, e1: int) -> None:
        """Draw every repetition's elements up to (not including) ``e1``."""
        if e1 <= self.hi:
            return
        fresh = self.random.standard_normal((e1 - self.hi, self.n_arms))  # (R, k, N), in stream order
        self.buf = np.concatenate([self.buf, fresh.transpose(1, 0, 2)], axis=0)

    def release(self, e: int) -> None:
        """Forget the elements before ``e``."""
        k = min(max(0, e - self.lo), self.buf.shape[0])
        if k:
            self.buf = self.buf[k:].copy()
            self.lo += k

    def window(self, e0: int, e1: int) -> np.ndarray:
        """Elements [e0, e1) of every stream, shape (R, e1 − e0, N) (a view)."""
        if e0 < self.lo or e1 > self.hi:
            raise ValueError(f"elements [{e0}, {e1}) are not held (held: [{self.lo}, {self.hi}))")
        return self.buf[e0 - self.lo : e1 - self.lo].transpose(1, 0, 2)


def _write_runs(actions: np.ndarray, C: int, reps: list, starts: list, lens: list, arms: list) -> None:
    """Write runs of one arm into ``actions`` (R, C): run i is ``lens[i]`` rounds of ``arms[i]`` from
    local round ``starts[i]`` in repetition ``reps[i]`` (lists of arrays, concatenated)."""
    rep = np.concatenate(reps)
    ln = np.concatenate(lens)
    first = np.concatenate(starts) + rep * C
    ends = np.cumsum(ln)
    pos = np.repeat(first - (ends - ln), ln) + np.arange(int(ends[-1]) if ends.size else 0)
    actions.reshape(-1)[pos] = np.repeat(np.concatenate(arms), ln)


def play_gaussian_ts_together(
    agents: Sequence[GaussianTSAgent], t0: int, t1: int, table: np.ndarray, noise: SharedNoise
) -> list[np.ndarray]:
    """Play rounds ``t0 .. t1-1`` of several Gaussian-TS agents (any (b, c), the same R
    repetitions) in one step loop over stacked rows (agent × repetition); return each agent's
    actions, shape (R, t1−t0).

    All agents see the same reward ``table`` (R, t1−t0, N) and read the same noise streams
    ``noise`` (:class:`SharedNoise`, holding every element the agents need for the chunk) —
    common random numbers: the agent with pre-pull end b·N uses element t − b·N at round t.
    Per row the arithmetic is that of :meth:`GaussianTSAgent.select`/:meth:`GaussianTSAgent.update`
    (with that row's b and sqrt(c)), so each agent's actions and state are bit-identical to
    playing it alone (tested); the gain is that the per-round Python overhead is paid once for
    all agents. Use it for agents whose speculation would fail (heavy exploration); the engine
    choice of each agent for its next chunk is updated as :meth:`GaussianTSAgent.run_chunk` would.
    When numba is available, agents whose engine is not ``"step"`` are played one by one with the
    compiled round loop instead (same actions; ``"step"`` stays the NumPy reference).
    """
    if not agents:
        return []
    R, C, N = table.shape
    if any(a.reps != R or a.n_arms != N for a in agents):
        raise ValueError("agents must have the table's repetitions and arms")
    if _fast.available() and any(a.policy.engine != "step" for a in agents):
        out: list[np.ndarray | None] = [None] * len(agents)
        for i, a in enumerate(agents):
            if a.policy.engine == "step":
                continue
            e0, e1 = a.noise_elements(t0, t1)
            noise.ensure(e1)
            a.use_noise(t0, noise.window(e0, e1) if e1 > e0 else np.empty((R, 0, N)))
            out[i] = a.play(t0, t1, table, speculate=False)
        rest = [i for i, o in enumerate(out) if o is None]
        for i, act in zip(rest, play_gaussian_ts_together([agents[i] for i in rest], t0, t1, table, noise)):
            out[i] = act
        return out  # type: ignore[return-value]
    K = len(agents)
    for a in agents:
        a._record(t0, t1, a.n)
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
    Tt = np.ascontiguousarray(table.transpose(1, 0, 2)).reshape(C, R * N)
    offs = np.arange(rows) * N
    roffs = np.tile(np.arange(R) * N, K)  # the row's repetition in a (R, N) table block
    # pre-pull rows (round t < b·N) play arm t // b; agent i reads element t − pe_i of the noise
    pe_agent = np.array([a._prepull_end for a in agents])
    pend = np.repeat(pe_agent, R)
    bs = np.repeat(np.array([max(a.policy.b, 1) for a in agents]), R)
    pmax = min(int(pend.max()), t1)
    need = [a.noise_elements(t0, t1) for a in agents]
    live = [e1 > e0 for e0, e1 in need]
    if any(live):
        lo = min(e0 for (e0, e1), ok in zip(need, live) if ok)
        noise.ensure(max(e1 for e0, e1 in need))
        if lo < noise.lo:
            raise ValueError(f"noise element {lo} was released already")
    buf, base = noise.buf, noise.lo
    actions = np.empty((rows, C), dtype=np.intp)
    for k in range(C):
        t = t0 + k
        # element t − pe of each agent (clipped during its pre-pull, where it is unused)
        idx = np.maximum(t - pe_agent, 0) - base
        np.clip(idx, 0, max(buf.shape[0] - 1, 0), out=idx)
        if buf.shape[0]:
            np.multiply(buf[idx], scale3, out=th3)
        else:
            th3.fill(0.0)
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
