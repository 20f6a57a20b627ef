"""The agent of Gaussian Thompson sampling with (b, c): R repetitions at once, three exact engines.

:class:`GaussianTSAgent` holds the reward sums S and counts n, shape (R, N), and plays a chunk of
rounds with the engine its policy names (:class:`bandits.thompson.policy.GaussianTS`):

* ``"auto"`` (default) — ``"kernel"`` when the compiled round loop is available (numba) and the
  run has at least ``KERNEL_MIN_ROUNDS`` (:mod:`bandits.engine.compiled`) sampling rounds over
  its repetitions (below, loading numba costs more than it saves), else ``"speculative"``
  (measured with numba, 10 repetitions, N = 5 and 50 arms, T = 10⁵ and 10⁶: the kernel takes
  0.70–0.89× the speculative engine's time, 0.51× at N = 50, T = 10⁶);
* ``"speculative"`` — :mod:`bandits.thompson.speculative`: runs of the leader are
  guessed and checked many rounds per NumPy call; where the policy explores a lot (large c)
  runs between deviations are short, so speculation is abandoned mid-chunk when it advances
  fewer than ``MIN_ADVANCE`` rounds per repetition and iteration, and the next chunk uses it
  only if the arm switched in fewer than 1/``MIN_ADVANCE`` of this chunk's rounds;
* ``"kernel"`` — the per-repetition round loop (compiled with numba when it is installed,
  :func:`bandits.engine.compiled.gaussian_ts_rounds`, else the NumPy step loop); compiled, on a
  Bernoulli instance, it reads the outcome table lazily instead of drawing it and draws the
  posterior noise in the loop (:func:`bandits.engine.compiled.gaussian_ts_stream_rounds`,
  :mod:`bandits.engine.bernoulli_stream`); with many repetitions (an audit's blocks) it draws the
  noise in the loop on any table (:func:`bandits.engine.compiled.gaussian_ts_drawing_rounds`);
* ``"step"`` — the plain NumPy step loop over all repetitions (the reference).

All give the same actions and state, bit for bit (tested); they differ in speed only.
Every chunk records in each repetition's ledger the report-noisy-max releases it really made,
with the noise scale it really used.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Protocol

import numpy as np

from bandits.engine import compiled
from bandits.policy import Agent, Outcomes, RunContext
from bandits.thompson.speculative import LENGTHS, MIN_ADVANCE, catch_up, speculate
from dpaudit.events import GaussianReportNoisyMaxEvent
from dpaudit.numerics import unique
from mechanisms.randomness import ScaledRandom

__all__ = ["GaussianTSAgent", "ThompsonParameters"]


class ThompsonParameters(Protocol):
    """What the agent reads of its configuration (:class:`bandits.thompson.policy.GaussianTS`)."""

    @property
    def b(self) -> int: ...

    @property
    def c(self) -> float: ...

    @property
    def engine(self) -> str: ...


class GaussianTSAgent(Agent):
    """State S (reward sums) and n (counts), shape (R, N); noise Z pre-drawn per chunk (or drawn
    in the compiled loop, :attr:`_generator_list`).

    Noise layout: repetition r's stream of N-vectors of standard normals starts at the first
    *sampling* round b·N (the deterministic pre-pull rounds draw nothing), so the k-th sampling
    round uses the k-th vector of the stream, whatever the chunking. ``_Z[:, k]`` is the noise
    of round ``_zoff + k``.
    """

    def __init__(self, policy: ThompsonParameters, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        self._prepull_end = min(policy.b * self.n_arms, self.horizon)
        self.stream_start = self._prepull_end  # the pre-pull rounds read a drawn table
        # a small run keeps to the NumPy engines (the same actions): loading numba costs more
        self._compiled = compiled.worth_compiling(self.reps * (self.horizon - self._prepull_end))
        self.engine = policy.engine
        if self.engine == "auto":
            self.engine = "kernel" if self._compiled else "speculative"
        self._sqrtc = math.sqrt(policy.c)
        shape = (self.reps, self.n_arms)
        self.S = np.zeros(shape)
        self.n = np.zeros(shape)
        self._mu = np.zeros(shape)
        self._scale = np.full(shape, self._sqrtc)
        self._theta = np.empty(shape)
        self._sqrtc_entry = np.array([self._sqrtc])  # the compiled loops' scale argument
        self._Z = np.empty((self.reps, 0, self.n_arms))
        self._zbuf = self._Z
        self._t0 = 0
        self._zoff = self._prepull_end  # the round whose noise is _Z[:, 0]
        self._noise_in_loop = False  # this chunk's noise is drawn in the compiled loop, not in _Z
        self._noise_factor = 1.0  # the loop's multiple of each draw (a noise-scaled stream's factor)
        self._K = 64
        self._speculating = True
        self._offsets = self.rows * self.n_arms
        # the first round whose action can depend on a reward: after the pre-pulls (b >= 1),
        # after round 0 (b = 0)
        self._first_private = max(self._prepull_end, 0 if policy.b else 1)
        self.watch: np.ndarray | None = None
        """Set by an audit of the posterior draws: the arm per repetition whose draw θ to keep."""
        self.drawn = np.empty((self.reps, 0))
        """With :attr:`watch`: the watched arms' draws θ in the last chunk's rounds, (R, C) (NaN in
        rounds without a draw). Engines ``"kernel"`` and ``"step"`` only."""

    _MIN_ADVANCE = MIN_ADVANCE
    _SPEC_MEMORY = 64 * 2**20  # the speculative engine's padded copies; above it, the round loop

    def _spec_bytes(self, C: int) -> int:
        """Bytes of the speculative engine's two time-padded (R, N, C + 512) copies."""
        return 16 * self.reps * self.n_arms * (C + LENGTHS[-1])

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
                compiled.fill_standard_normal(g, self._Z[r])  # compiled where numba is: same values
        self._t0 = t0
        self._zoff = start
        self._noise_in_loop = False

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
        rows, watch = self.rows, self.watch
        for k in range(k0, table.shape[1]):
            arms = self.select(t0 + k)
            if watch is not None and t0 + k >= self._prepull_end:
                self.drawn[:, k] = self._theta[rows, watch]
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
        for mv in unique(m).tolist():
            self.run.ledgers.record(
                np.flatnonzero(m == mv),
                _round_event(self.n_arms, mv, self._sqrtc).repeat(k),
                units=None,
                label=f"rounds {max(t0, self._first_private)}..{t1 - 1}: argmax of posterior draws",
            )

    def shares_step_loop(self, t1: int, sampled: bool) -> bool:
        """Whether :func:`bandits.thompson.joint.play_together` should play this agent's chunk ending at
        ``t1`` (heavy exploration: its speculation failed, or it has not sampled yet)."""
        return t1 > self._prepull_end and (
            self.engine != "speculative" or not (sampled and self._speculating)
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

    @functools.cached_property
    def reads_outcome_stream(self) -> bool:  # type: ignore[override]
        """The kernel engine, compiled, drawing its noise from plain generators, and no draws
        watched: it reads a Bernoulli table lazily (:meth:`_play_stream`)."""
        gens = getattr(self.run.random, "generators", [None])
        return (self.engine == "kernel" and self.watch is None and compiled.available()
                and all(type(g) is np.random.Generator for g in gens))

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        """Rounds ``t0 .. t1-1`` with the policy's engine (module docstring)."""
        stream = outcomes.stream
        streamed = self.watch is None and self.reads_outcome_stream
        if stream is not None and t0 >= self._prepull_end and streamed:
            return self._play_stream(t0, t1, outcomes, stream)
        if self._generator_list is not None:  # the compiled loop draws the noise itself
            self._noise_in_loop, self._t0, self._zoff = True, t0, max(t0, self._prepull_end)
            return self.play(t0, t1, outcomes.table)
        self.prepare(t0, t1)
        return self.play(t0, t1, outcomes.table)

    @functools.cached_property
    def _generator_list(self) -> Any:
        """The kernel engine's plain generators as one compiled-code argument
        (:func:`bandits.engine.compiled.generator_list`), or None: the noise is then drawn into a
        buffer first (no numba, another engine, wrapped generators, or fewer repetitions than
        ``GENERATOR_LIST_MIN_REPS``, where building the list costs more than it saves). A
        noise-scaled stream (:class:`~mechanisms.randomness.ScaledRandom`: a measured floor's
        variants) lists its plain generators and the loop multiplies each draw by its factor."""
        random = self.run.random
        scaled = random if type(random) is ScaledRandom else None
        gens = scaled.unscaled_generators if scaled is not None else getattr(random, "generators", None)
        if self.engine != "kernel" or gens is None or self.reps < compiled.GENERATOR_LIST_MIN_REPS:
            return None
        self._noise_factor = scaled.factor if scaled is not None else 1.0
        return compiled.generator_list(gens) if compiled.available() else None

    def _play_stream(self, t0: int, t1: int, outcomes: Outcomes, stream: Any) -> np.ndarray:
        """A chunk of sampling rounds read from the outcome stream, the noise drawn in the loop
        (:func:`bandits.engine.compiled.gaussian_ts_stream_rounds`): the actions, state and
        streams of :meth:`prepare` + :meth:`play` on the drawn table, without the table or Z."""
        C = t1 - t0
        actions = np.empty((self.reps, C), dtype=np.intp)
        observed = np.empty((self.reps, C))
        self._record(t0, t1, self.n)
        compiled.gaussian_ts_stream_rounds(self.run.random.generators, stream, self.S, self.n,
                                           self._sqrtc_entry, actions, observed)  # fmt: skip
        outcomes.observed = observed
        self._refresh()
        return actions

    def use_noise(self, t0: int, Z: np.ndarray) -> None:
        """Use ``Z`` (shape (R, C, N), read only) as the pre-drawn noise of the sampling rounds
        ``max(t0, b·N) ..`` of the chunk starting at ``t0`` instead of drawing it
        (:meth:`prepare`); ``Z[r]`` must be the elements :meth:`noise_elements` of repetition
        r's stream, e.g. a view of a :class:`~bandits.thompson.joint.SharedNoise` shared by several
        agents."""
        self._Z = Z
        self._t0 = t0
        self._zoff = max(t0, self._prepull_end)
        self._noise_in_loop = False

    def play(self, t0: int, t1: int, table: np.ndarray, speculate: bool = True) -> np.ndarray:
        """:meth:`run_chunk` with the noise already in place (:meth:`prepare`/:meth:`use_noise`);
        ``speculate=False`` skips the speculative engine for this chunk (same actions)."""
        C, R = t1 - t0, self.reps
        actions = np.empty((R, C), dtype=np.intp)
        self._record(t0, t1, self.n)
        if self.watch is not None:
            if self.engine not in ("kernel", "step"):
                raise ValueError(f"watching the draws needs the kernel or step engine, not {self.engine!r}")
            self.drawn = np.full((R, C), np.nan)
        if self.engine == "step":
            self._step_loop(t0, 0, table, actions)
            return actions
        start = self._prepull(t0, t1, table, actions) if t0 < self._prepull_end else t0
        k = start - t0
        if k < C:
            p = np.full(R, k)
            if self.engine == "speculative":
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
        numba is available (:func:`bandits.engine.compiled.gaussian_ts_rounds`), else :meth:`_catch_up`
        and the NumPy step loop. Both give the same actions and state, bit for bit (tested)."""
        C = actions.shape[1]
        if self._noise_in_loop:  # the kernel engine: every repetition starts from the same round
            compiled.gaussian_ts_drawing_rounds(self._generator_list, self.S, self.n, table, int(p[0]),
                                                self._sqrtc_entry, actions, self.watch, self.drawn,
                                                self._noise_factor)  # fmt: skip
            return
        if self._compiled or (self.engine == "kernel" and compiled.available()):
            compiled.gaussian_ts_rounds(self.S, self.n, self._Z, self._zoff - t0, table, p, self._sqrtc_entry,
                                     actions, self.watch, self.drawn)  # fmt: skip
            return
        if self.watch is not None:  # watching the draws: the step loop from the common start
            self._refresh()  # (catch-up computes no draw; it refreshes the caches itself)
            k = int(p.min())
        else:
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
        """Speculate from local round k0 (:func:`bandits.thompson.speculative.speculate`); return
        each repetition's local round from which the round loop (:meth:`_rounds`) must continue
        (C where the chunk is done)."""
        off = self._zoff - self._t0  # the noise starts at the chunk's first sampling round
        p, self._K, _ = speculate(self.S, self.n, self._Z, off, table, self._sqrtc, k0, self._K, actions)
        return p

    def _catch_up(self, p: np.ndarray, table: np.ndarray, actions: np.ndarray) -> int:
        """:func:`bandits.thompson.speculative.catch_up` on this agent's state."""
        self._refresh()
        off = self._zoff - self._t0
        return catch_up(self.S, self.n, self._mu, self._scale, self._Z, off, self._sqrtc, p, table, actions)


@functools.lru_cache(maxsize=4096)
def _round_event(n_arms: int, m: int, sqrtc: float) -> GaussianReportNoisyMaxEvent:
    """One sampling round's release when every arm holding data has at least m pulls (frozen:
    shared by the chunks and repetitions that record it)."""
    n1 = m + 1.0
    return GaussianReportNoisyMaxEvent(
        sensitivities=(1.0 / n1,) * n_arms, sigmas=(sqrtc / math.sqrt(n1),) * n_arms
    )

