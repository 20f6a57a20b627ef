"""Many Gaussian Thompson-sampling configurations played together (the tuner, figure grids).

:class:`GaussianTSJoint` is Gaussian TS's :class:`~bandits.policy.JointPlayer`: the simulator
hands it the agents of every (b, c) configuration of one :func:`bandits.engine.simulator.simulate_many`
call. All read one :class:`SharedNoise` tape per group of configurations (common random numbers:
element e of repetition r's stream is the noise of sampling round b·N + e of *any* (b, c) agent),
and the agents whose speculation would fail (heavy exploration) are played in one step loop over
stacked rows (:func:`play_together`). Each agent's actions and state are bit-identical to playing
it alone (tested); the per-round Python overhead is paid once for all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bandits.engine import compiled
from bandits.policy import Agent, JointContext, JointPlayer
from bandits.thompson.agent import GaussianTSAgent
from mechanisms.randomness import RepRandom

__all__ = ["SharedNoise", "noise_groups", "play_together", "GaussianTSJoint"]


class SharedNoise:
    """Gaussian-TS noise streams shared by several agents with the same repetition seeds.

    Element e of repetition r's stream is the N-vector of standard normals of the sampling
    round b·N + e of *any* (b, c) agent built from those seeds (:class:`GaussianTSAgent`), so
    one draw serves every agent (common random numbers); agents with different b read
    different elements at the same round. The buffer is element-major, shape (L, R, N),
    holding elements [lo, lo + L); :meth:`ensure` draws up to an element, :meth:`release`
    forgets the ones no agent needs any more.

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


def noise_groups(
    agents: Sequence[GaussianTSAgent], reps: int, n_arms: int, chunk: int, memory: int
) -> list[list[GaussianTSAgent]]:
    """Agents grouped by pre-pull end b·N (sorted) so that one shared noise tape spans at most
    ``memory`` bytes: agents whose pre-pull ends differ by more than the span a tape can hold
    read separate tapes (the same streams, drawn twice).

    A tape holds the elements between the slowest and the fastest reader of its group plus one
    chunk: (max b·N − min b·N + chunk) × R × N doubles.
    """
    span = max(chunk, memory // (8 * max(1, reps) * max(1, n_arms)) - chunk)
    out: list[list[GaussianTSAgent]] = []
    for a in sorted(agents, key=lambda a: a._prepull_end):
        if out and a._prepull_end - out[-1][0]._prepull_end <= span:
            out[-1].append(a)
        else:
            out.append([a])
    return out


def play_together(
    agents: Sequence[GaussianTSAgent], t0: int, t1: int, table: np.ndarray, noise: SharedNoise
) -> list[np.ndarray]:
    """Play rounds ``t0 .. t1-1`` of several Gaussian-TS agents (any (b, c), the same R
    repetitions) in one step loop over stacked rows (agent × repetition); return each agent's
    actions, shape (R, t1−t0).

    All agents see the same reward ``table`` (R, t1−t0, N) and read the same noise streams
    ``noise`` — common random numbers: the agent with pre-pull end b·N uses element t − b·N at
    round t. Per row the arithmetic is that of ``GaussianTSAgent.select``/``update`` (with that
    row's b and sqrt(c)), so each agent's actions and state are bit-identical to playing it
    alone (tested). The engine choice of each agent for its next chunk is updated as
    ``GaussianTSAgent.run_chunk`` would. When numba is available, agents whose engine is not
    ``"step"`` are played one by one with the compiled round loop instead (same actions;
    ``"step"`` stays the NumPy reference).
    """
    if not agents:
        return []
    R, C, N = table.shape
    if any(a.reps != R or a.n_arms != N for a in agents):
        raise ValueError("agents must have the table's repetitions and arms")
    if compiled.available() and any(a.policy.engine != "step" for a in agents):
        return _one_by_one(agents, t0, t1, table, noise)
    for a in agents:
        a._record(t0, t1, a.n)
    S = np.concatenate([a.S for a in agents])  # (K·R, N), row k·R + r
    n = np.concatenate([a.n for a in agents])
    actions = _stacked_rounds(agents, S, n, t0, t1, table, noise)
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


def _one_by_one(
    agents: Sequence[GaussianTSAgent], t0: int, t1: int, table: np.ndarray, noise: SharedNoise
) -> list[np.ndarray]:
    """Agents with a compiled engine play alone (the compiled round loop); the ``"step"`` ones
    together (:func:`play_together`)."""
    R, _, N = table.shape
    out: list[np.ndarray | None] = [None] * len(agents)
    for i, a in enumerate(agents):
        if a.policy.engine == "step":
            continue
        e0, e1 = a.noise_elements(t0, t1)
        noise.ensure(e1)
        a.use_noise(t0, noise.window(e0, e1) if e1 > e0 else np.empty((R, 0, N)))
        out[i] = a.play(t0, t1, table, speculate=False)
    rest = [i for i, o in enumerate(out) if o is None]
    for i, act in zip(rest, play_together([agents[i] for i in rest], t0, t1, table, noise)):
        out[i] = act
    return [o for o in out if o is not None]


def _stacked_rounds(
    agents: Sequence[GaussianTSAgent], S: np.ndarray, n: np.ndarray, t0: int, t1: int,
    table: np.ndarray, noise: SharedNoise,
) -> np.ndarray:  # fmt: skip
    """The step loop over stacked rows (agent × repetition), updating ``S`` and ``n`` (K·R, N)
    in place; the actions (K·R, t1 − t0)."""
    R, C, N = table.shape
    K = len(agents)
    rows = K * R
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
    _hold_noise(agents, t0, t1, noise)
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
    return actions


def _hold_noise(agents: Sequence[GaussianTSAgent], t0: int, t1: int, noise: SharedNoise) -> None:
    """Draw every noise element the agents need for rounds ``t0 .. t1-1``."""
    need = [a.noise_elements(t0, t1) for a in agents]
    live = [e1 > e0 for e0, e1 in need]
    if any(live):
        lo = min(e0 for (e0, e1), ok in zip(need, live) if ok)
        noise.ensure(max(e1 for e0, e1 in need))
        if lo < noise.lo:
            raise ValueError(f"noise element {lo} was released already")


class GaussianTSJoint(JointPlayer):
    """Gaussian TS's joint player (module docstring): one noise tape per group of agents
    (:func:`noise_groups`), each agent played alone on its window of the tape while its
    speculation pays, the others together in one step loop (:func:`play_together`)."""

    def __init__(self, agents: Sequence[Agent], context: JointContext) -> None:
        super().__init__(agents, context)
        self.ts_agents = [a for a in agents if isinstance(a, GaussianTSAgent)]
        if len(self.ts_agents) != len(self.agents):
            raise ValueError("GaussianTSJoint plays Gaussian Thompson-sampling agents only")
        c = context
        self.groups = noise_groups(self.ts_agents, c.reps, c.n_arms, c.chunk, c.memory)
        self.tape_of: dict[int, SharedNoise] = {}
        for grp in self.groups:
            tape = SharedNoise(context.policy_random(), context.n_arms)
            self.tape_of.update({id(a): tape for a in grp})
        self.sampled = [False] * len(self.agents)  # has the agent played a sampling round yet?

    def play(self, t0: int, t1: int, table: np.ndarray) -> list[np.ndarray]:
        agents = self.ts_agents
        acts: list[np.ndarray | None] = [None] * len(agents)
        together: dict[int, list[int]] = {}
        for i, a in enumerate(agents):
            tape = self.tape_of[id(a)]
            # the step loop, shared, for agents whose speculation failed in their previous
            # sampling chunk, and for the first one (speculation pays off only for long runs of
            # one arm, and a failed attempt costs more than a shared step loop)
            if a.shares_step_loop(t1, self.sampled[i]):
                together.setdefault(id(tape), []).append(i)
            else:
                e0, e1 = a.noise_elements(t0, t1)
                tape.ensure(e1)
                a.use_noise(t0, tape.window(e0, e1))
                acts[i] = a.play(t0, t1, table)
        for idx in together.values():
            tape = self.tape_of[id(agents[idx[0]])]
            for i, act in zip(idx, play_together([agents[i] for i in idx], t0, t1, table, tape)):
                acts[i] = act
        for grp in self.groups:  # forget the noise every agent of the group has used
            self.tape_of[id(grp[0])].release(min(a.noise_elements(t1, t1)[0] for a in grp))
        for i, a in enumerate(agents):
            if a.samples_before(t1):
                self.sampled[i] = True
        return [a for a in acts if a is not None]
