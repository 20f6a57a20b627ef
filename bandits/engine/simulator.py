"""Regret simulation, vectorised across repetitions, with common random numbers.

Randomness layout (no global RNG anywhere; :mod:`bandits.engine.streams`): repetition ``r`` owns three
seed streams — outcomes, the policy's randomness, its mechanisms' privacy noise — that do not
depend on how many repetitions run, how they are grouped or which executor runs them. So
repetition r's outcomes are the same for every policy (common random numbers); and a
*neighbouring stream* (``replace=``, :mod:`bandits.engine.replacement`) changes exactly one unit of
privacy while leaving the policy randomness untouched.

Every run builds a :class:`~bandits.policy.RunContext` per block of repetitions (ready
generators and one ledger per repetition), plays the policy's agent chunk by chunk against the
outcome table with the policy's feedback model, and returns the regret curves, the pull counts,
optionally the actions, and every repetition's ledger of recorded releases.

Memory: the chunk of rounds held at once is sized to ``memory`` bytes (about 32 bytes per
round × repetition × arm for Gaussian TS's engine); chunking never changes the results.

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.thompson.policy import GaussianTS
    >>> env = BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25))
    >>> res = simulate(GaussianTS(), env, 2000, repetitions=4, seed=1, progress=False)
    >>> res.pseudo_regret.shape == (4, res.checkpoints.size), int(res.checkpoints[-1])
    (True, 2000)
    >>> again = simulate(GaussianTS(engine="step"), env, 2000, repetitions=4, seed=1, progress=False)
    >>> bool((again.pseudo_regret == res.pseudo_regret).all())
    True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bandits.actions import SingleArm
from bandits.engine.replacement import Replacement, RewardReplacement, RoundReplacement
from bandits.engine.streams import RepStreams, rep_streams, root_seed
from bandits.environments import Environment, RewardTableEnv
from bandits.policy import JointContext, JointPlayer, Outcomes, Policy, RunContext
from dpaudit.ledger import Ledger, RunLedgers
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

__all__ = [
    "SimulationResult",
    "simulate",
    "simulate_many",
    "reward_table",
    "log_checkpoints",
    "chunk_rounds",
    "estimated_bytes",
    "memory_limit",
    "DEFAULT_CHUNK",
    "DEFAULT_MEMORY",
]

DEFAULT_CHUNK = 8192
DEFAULT_MEMORY = 64 * 2**20  # 128 MiB peaked at 324 MB on the memory benchmark (R = 100, N = 50), 64 at 269
BYTES_PER_CELL = 32
"""Bytes held per round × repetition × arm of a chunk (reward table, noise, the speculative
engine's padded copies), measured for Gaussian TS: 1.3 GB at 8192 × 100 × 50."""


def chunk_rounds(reps: int, n_arms: int, memory: int = DEFAULT_MEMORY) -> int:
    """Rounds per chunk so that a block of ``reps`` repetitions holds about ``memory`` bytes
    (at least 1, at most :data:`DEFAULT_CHUNK`).

    >>> chunk_rounds(10, 5), chunk_rounds(100, 50), chunk_rounds(10, 10**6)
    (8192, 419, 1)
    """
    per_round = BYTES_PER_CELL * max(1, reps) * max(1, n_arms)
    return int(min(DEFAULT_CHUNK, max(1, check_integer("memory", memory) // per_round)))


def memory_limit() -> int:
    """The most a simulation may hold: 3/4 of this machine's physical memory (8 GiB if unknown)."""
    import os

    try:
        return int(0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


def estimated_bytes(
    repetitions: int,
    rep_block: int,
    n_arms: int,
    horizon: int,
    checkpoints: int,
    chunk: int,
    policies: int,
    action_size: int,
    record_actions: bool,
) -> int:
    """Peak bytes of a simulation, estimated before it starts: each block's chunk of outcomes and
    noise (:data:`BYTES_PER_CELL` per round × repetition × arm) and every policy's per-arm state
    (about 10 arrays of 8 bytes per repetition × arm), plus the results of all repetitions
    (two regret curves, pull counts and, if recorded, the actions).

    >>> round(estimated_bytes(100, 100, 50, 10**5, 50, 419, 1, 1, False) / 2**20)
    64
    """
    block = rep_block * n_arms * (BYTES_PER_CELL * chunk + 80 * policies)
    results = policies * repetitions * (16 * checkpoints + 8 * n_arms)
    actions = (
        policies * repetitions * horizon * action_size * (1 if n_arms <= 127 else 4) if record_actions else 0
    )
    return int(block + results + actions)


def reward_table(
    env: Environment,
    horizon: int,
    seed: int | np.random.SeedSequence,
    rep: int = 0,
    replace: Replacement | None = None,
) -> np.ndarray:
    """The (T, N) outcome table that :func:`simulate` uses for repetition ``rep``.

    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.references.policies import UCB1
    >>> env = BernoulliEnv((0.9, 0.1))
    >>> tab = reward_table(env, 5, seed=3)
    >>> res = simulate(UCB1(), env, 5, repetitions=1, seed=3, record_actions=True, progress=False)
    >>> obs = tab[np.arange(5), res.actions[0]]
    >>> bool(np.isclose(res.empirical_regret[0, -1], 0.9 * 5 - obs.sum()))
    True
    """
    rng = np.random.Generator(np.random.PCG64(rep_streams(seed, rep).rewards))
    tab = np.array(env.reward_chunk(rep, 0, horizon, rng), dtype=float)
    if replace is not None:
        replace.check(horizon, env.n_arms)
        replace.apply(tab[None], 0)
    return tab


def log_checkpoints(horizon: int, num: int = 50) -> np.ndarray:
    """About ``num`` log-spaced round counts in [1, T], always including T.

    >>> log_checkpoints(1000, 4).tolist()
    [1, 10, 100, 1000]
    """
    horizon = check_integer("horizon", horizon)
    num = check_integer("checkpoints", num)
    pts = np.unique(np.round(np.geomspace(1, horizon, num)).astype(np.int64))
    return np.unique(np.append(pts, horizon))


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Regret curves of one (policy, environment) pair over R repetitions.

    Arrays: ``checkpoints`` (C,) round counts; ``pseudo_regret`` and ``empirical_regret``
    (R, C): Σ_{s<t}(opt − E[reward of a_s]) and opt·t − Σ_{s<t} r_s; ``pulls`` (R, N) how often
    each arm was played (in a set or list, each member counts); ``actions`` (R, T, *action
    shape) or None; ``ledgers``: each repetition's recorded releases.
    """

    policy: str
    env: str
    horizon: int
    repetitions: int
    seed_entropy: int | None
    means: np.ndarray = field(repr=False)
    checkpoints: np.ndarray = field(repr=False)
    pseudo_regret: np.ndarray = field(repr=False)
    empirical_regret: np.ndarray = field(repr=False)
    pulls: np.ndarray = field(repr=False)
    actions: np.ndarray | None = field(default=None, repr=False)
    replacement: Replacement | None = None
    elapsed: float = 0.0
    ledgers: tuple[Ledger, ...] = field(default=(), repr=False)

    def _curves(self, kind: str) -> np.ndarray:
        if kind == "pseudo":
            return self.pseudo_regret
        if kind == "empirical":
            return self.empirical_regret
        raise ValueError(f"kind must be 'pseudo' or 'empirical', got {kind!r}")

    def mean(self, kind: str = "pseudo") -> np.ndarray:
        """Mean regret over repetitions at each checkpoint."""
        return self._curves(kind).mean(axis=0)

    def stderr(self, kind: str = "pseudo") -> np.ndarray:
        """Standard error of the mean (0 for a single repetition)."""
        c = self._curves(kind)
        if c.shape[0] < 2:
            return np.zeros(c.shape[1])
        return c.std(axis=0, ddof=1) / math.sqrt(c.shape[0])

    def band(self, kind: str = "pseudo", level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """A ``level`` confidence band for the mean regret: mean ∓ t·stderr with the Student t
        quantile on R − 1 degrees of freedom (4.30 at R = 3, 1.98 at R = 100; the normal 1.96
        would be far too narrow for a few repetitions). One repetition: the band is the curve.

        >>> from bandits.environments import BernoulliEnv
        >>> from bandits.references.policies import UCB1
        >>> r = simulate(UCB1(), BernoulliEnv((0.5, 0.4)), 100, repetitions=3, progress=False)
        >>> lo, hi = r.band()
        >>> bool(np.allclose(hi - r.mean(), 4.302653 * r.stderr(), rtol=1e-6))
        True
        """
        from scipy import stats

        m, s = self.mean(kind), self.stderr(kind)
        if self.repetitions < 2:
            return m, m
        t = float(stats.t.ppf(0.5 + level / 2.0, self.repetitions - 1))
        return m - t * s, m + t * s

    def final(self, kind: str = "pseudo") -> float:
        """Mean regret at the horizon."""
        return float(self.mean(kind)[-1])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (arrays as nested lists; ledgers are not included).

        >>> import json
        >>> from bandits.environments import BernoulliEnv
        >>> from bandits.references.policies import UCB1
        >>> r = simulate(UCB1(), BernoulliEnv((0.5, 0.4)), 10, repetitions=2, progress=False)
        >>> sorted(json.loads(json.dumps(r.to_dict())))[:4]
        ['actions', 'checkpoints', 'elapsed', 'empirical_regret']
        """
        return {
            "policy": self.policy,
            "env": self.env,
            "horizon": self.horizon,
            "repetitions": self.repetitions,
            "seed_entropy": self.seed_entropy,
            "means": self.means.tolist(),
            "checkpoints": self.checkpoints.tolist(),
            "pseudo_regret": self.pseudo_regret.tolist(),
            "empirical_regret": self.empirical_regret.tolist(),
            "pseudo_regret_mean": self.mean("pseudo").tolist(),
            "pseudo_regret_stderr": self.stderr("pseudo").tolist(),
            "empirical_regret_mean": self.mean("empirical").tolist(),
            "empirical_regret_stderr": self.stderr("empirical").tolist(),
            "pulls": self.pulls.tolist(),
            "actions": None if self.actions is None else self.actions.tolist(),
            "replacement": None if self.replacement is None else asdict(self.replacement),
            "elapsed": self.elapsed,
        }


def _action_dtype(n_arms: int) -> type:
    return np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int32)


class _Tally:
    """Regret curves, pulls and (optionally) actions of R repetitions, fed chunk by chunk."""

    def __init__(
        self, env: Environment, horizon: int, R: int, checkpoints: np.ndarray, record_actions: bool
    ) -> None:
        N = env.n_arms
        self.R, self.N, self.ck = R, N, checkpoints
        self.structure, self.means = env.structure, env.means
        self.single = isinstance(self.structure, SingleArm)
        self.gaps, self.opt = env.gaps, env.optimum
        C = checkpoints.size
        self.pseudo = np.empty((R, C))
        self.emp = np.empty((R, C))
        self.pulls = np.zeros((R, N), dtype=np.int64)
        shape = (R, horizon) + self.structure.shape
        self.acts = np.empty(shape, dtype=_action_dtype(N)) if record_actions else None
        self.cum_gap = np.zeros(R)
        self.cum_rew = np.zeros(R)
        self.ci = 0

    def _instant(self, a: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(regret of each action's expected reward, realised reward), shape (R, C) each."""
        if self.single:
            return self.gaps[a], np.take_along_axis(table, a[:, :, None], axis=2)[:, :, 0]
        gap = self.opt - self.structure.expected_reward(self.means, a)
        return gap, self.structure.realised_reward(table, a)

    def add(self, t0: int, t1: int, a: np.ndarray, table: np.ndarray) -> None:
        """Record the actions ``a`` (R, t1−t0, ...) played against ``table`` (R, t1−t0, N)."""
        R, N, checkpoints = self.R, self.N, self.ck
        gap, obs = self._instant(a, table)
        # running sums continued from the carry, left to right: the same floats whatever the
        # chunk boundaries (adding the carry after summing the chunk would not be)
        g = np.cumsum(np.concatenate([self.cum_gap[:, None], gap], axis=1), axis=1)[:, 1:]
        w = np.cumsum(np.concatenate([self.cum_rew[:, None], obs], axis=1), axis=1)[:, 1:]
        ci = cj = self.ci
        while cj < checkpoints.size and checkpoints[cj] <= t1:
            cj += 1
        if cj > ci:
            loc = checkpoints[ci:cj] - t0 - 1
            self.pseudo[:, ci:cj] = g[:, loc]
            self.emp[:, ci:cj] = (self.opt * checkpoints[ci:cj])[None, :] - w[:, loc]
            self.ci = cj
        self.cum_gap, self.cum_rew = g[:, -1].copy(), w[:, -1].copy()
        flat = (a.reshape(R, -1) + (np.arange(R) * N)[:, None]).ravel()
        self.pulls += np.bincount(flat, minlength=R * N).reshape(R, N)
        if self.acts is not None:
            self.acts[:, t0:t1] = a

    def result(self) -> dict[str, Any]:
        return {"pseudo": self.pseudo, "emp": self.emp, "pulls": self.pulls, "actions": self.acts}


class _Tables:
    """The outcome tables of repetitions ``reps``, chunk by chunk (as :func:`reward_table`)."""

    def __init__(self, env: Environment, reps: Sequence[int], streams: Sequence[RepStreams]) -> None:
        self.env, self.reps = env, list(reps)
        # a RewardTableEnv with one (T, N) table draws nothing: share it, build no reward RNGs
        self.shared = isinstance(env, RewardTableEnv) and env.table.ndim == 2
        self.rngs = (
            [None] * len(reps)
            if self.shared
            else [np.random.Generator(np.random.PCG64(s.rewards)) for s in streams]
        )

    def chunk(self, t0: int, t1: int, replace: Replacement | None) -> np.ndarray:
        env, R, N = self.env, len(self.reps), self.env.n_arms
        touched = replace is not None and t0 <= replace.round < t1
        if self.shared and not touched:
            # read-only view of the shared table (reward_chunk validates the horizon), no copies
            return np.broadcast_to(env.reward_chunk(self.reps[0], t0, t1, None), (R, t1 - t0, N))
        table = np.empty((R, t1 - t0, N))
        for i, (r, g) in enumerate(zip(self.reps, self.rngs)):
            table[i] = env.reward_chunk(r, t0, t1, g)
        if touched:
            replace.apply(table, t0)
        return table


def _context(env: Environment, horizon: int, streams: Sequence[RepStreams]) -> RunContext:
    return RunContext(
        env.n_arms,
        horizon,
        env.structure,
        RepRandom([s.policy for s in streams]),
        RepRandom([s.privacy for s in streams]),
        RunLedgers(len(streams)),
    )


def _run_reps(
    policy: Policy,
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    chunk_size: int,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Simulate repetitions ``reps`` (one vectorised block). Module-level: picklable."""
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    run = _context(env, horizon, streams)
    agent = policy.agent(run)
    tally = _Tally(env, horizon, len(reps), checkpoints, record_actions)
    for t0 in range(0, horizon, chunk_size):
        t1 = min(horizon, t0 + chunk_size)
        table = tables.chunk(t0, t1, replace)
        tally.add(t0, t1, agent.run_chunk(t0, t1, Outcomes(table, policy.feedback)), table)
        if on_progress is not None:
            on_progress((t1 - t0) * len(reps))
    agent.finish()
    return {**tally.result(), "ledgers": tuple(run.ledgers)}


def _run_reps_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    chunk_size: int,
    on_progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`_run_reps` for several policies at once (one list entry per policy), sharing the
    outcome table of each chunk; the agents of a policy class with a joint player
    (:attr:`bandits.policy.Policy.joint_player`) are played by it; see :func:`simulate_many`."""
    R = len(reps)
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    runs = [_context(env, horizon, streams) for _ in policies]  # fresh generators per agent
    agents = [p.agent(run) for p, run in zip(policies, runs)]
    tallies = [_Tally(env, horizon, R, checkpoints, record_actions) for _ in policies]
    context = JointContext(R, env.n_arms, chunk_size, DEFAULT_MEMORY,
                           lambda: RepRandom([s.policy for s in streams]))  # fmt: skip
    joint: dict[type[JointPlayer], list[int]] = {}
    for i, p in enumerate(policies):
        if p.joint_player is not None:
            joint.setdefault(p.joint_player, []).append(i)
    players = [(idx, make([agents[i] for i in idx], context)) for make, idx in joint.items()]
    alone = sorted(set(range(len(agents))) - {i for idx in joint.values() for i in idx})
    for t0 in range(0, horizon, chunk_size):
        t1 = min(horizon, t0 + chunk_size)
        table = tables.chunk(t0, t1, replace)
        acts: list[np.ndarray | None] = [None] * len(agents)
        for i in alone:
            acts[i] = agents[i].run_chunk(t0, t1, Outcomes(table, policies[i].feedback))
        for idx, player in players:
            for i, act in zip(idx, player.play(t0, t1, table), strict=True):
                acts[i] = act
        for i, act in enumerate(acts):
            tallies[i].add(t0, t1, act, table)
        if on_progress is not None:
            on_progress((t1 - t0) * R * len(agents))
    for a in agents:
        a.finish()
    return [{**t.result(), "ledgers": tuple(run.ledgers)} for t, run in zip(tallies, runs)]


def simulate(
    policy: Policy,
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] = 50,
    record_actions: bool = False,
    replace: Replacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int | None = None,
    memory: int = DEFAULT_MEMORY,
    progress: bool = True,
) -> SimulationResult:
    """Run ``policy`` on ``env`` for ``horizon`` rounds, ``repetitions`` times.

    Args:
        checkpoints: number of log-spaced checkpoints, or explicit round counts in [1, T].
        record_actions: keep the (R, T, ...) actions (int8 for N ≤ 127).
        replace: neighbouring stream — one reward (:class:`~bandits.engine.replacement.RewardReplacement`)
            or one round's outcome vector (:class:`~bandits.engine.replacement.RoundReplacement`) is
            replaced in every repetition; the policy randomness is unchanged.
        executor: anything with ``submit`` (e.g. ``concurrent.futures`` executors); blocks of
            ``rep_chunk`` repetitions are submitted as tasks. Results are identical with and
            without an executor.
        rep_chunk: repetitions per vectorised block (default: all, capped at 256; with an
            executor, about R/8).
        chunk_size: rounds per pre-drawn block (default: :func:`chunk_rounds` of ``memory``);
            does not change the results.
        memory: bytes a block may hold for its chunk of rounds (default 64 MiB).
        progress: show a tqdm progress bar.
    """
    return simulate_many(
        [policy], env, horizon, repetitions, seed, checkpoints=checkpoints, record_actions=record_actions,
        replace=replace, executor=executor, rep_chunk=rep_chunk, chunk_size=chunk_size, memory=memory,
        progress=progress,
    )[0]  # fmt: skip


def simulate_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] = 50,
    record_actions: bool = False,
    replace: Replacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int | None = None,
    memory: int = DEFAULT_MEMORY,
    progress: bool = True,
) -> list[SimulationResult]:
    """``[simulate(p, env, horizon, repetitions, seed, ...) for p in policies]``, bit-identical
    (tested), but faster for many :class:`~bandits.thompson.policy.GaussianTS` configurations.

    All policies run in one pass over time: each chunk's outcome table is drawn once and shared
    (common random numbers make it the same for every policy), and the agents of a policy class
    that offers a joint player (:attr:`bandits.policy.Policy.joint_player`) are played by it:
    Gaussian TS draws its noise once for all (b, c) and plays the agents that explore heavily in
    one step loop over stacked (policy × repetition) rows
    (:class:`~bandits.thompson.joint.GaussianTSJoint`), so the per-round Python overhead is paid
    once instead of once per policy. Every agent gets its own fresh
    generators, so one policy's draws never shift another's. The arguments are those of
    :func:`simulate`; ``elapsed`` of every result is the time of the whole call.

    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.thompson.policy import GaussianTS
    >>> env = BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25))
    >>> pols = [GaussianTS(b=b, c=c) for b, c in ((0, 500.0), (3, 100.0), (40, 2.0))]
    >>> many = simulate_many(pols, env, 3000, repetitions=3, seed=2, progress=False)
    >>> all((m.pseudo_regret == simulate(p, env, 3000, 3, 2, progress=False).pseudo_regret).all()
    ...     for p, m in zip(pols, many))
    True
    """
    policies = list(policies)
    if not policies:
        return []
    return _simulate(policies, env, horizon, repetitions, seed, checkpoints, record_actions, replace,
                     executor, rep_chunk, chunk_size, memory, progress)  # fmt: skip


def _checked(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    checkpoints: int | Sequence[int],
    replace: Replacement | None,
) -> tuple[int, int, np.ndarray]:
    """Validate the arguments of :func:`simulate`; return (T, R, checkpoint rounds)."""
    if not isinstance(env, Environment):
        raise ValueError(f"env must be a bandits.environments.Environment, got {type(env).__name__}")
    env.structure.validate(env.n_arms)
    for policy in policies:
        if not isinstance(policy, Policy):
            raise ValueError(f"policy must be a bandits.policy.Policy, got {type(policy).__name__}")
        policy.check_structure(env.structure)
    horizon = check_integer("horizon", horizon)
    repetitions = check_integer("repetitions", repetitions)
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        ck = log_checkpoints(horizon, int(checkpoints))
    else:
        ck = np.unique(np.asarray(checkpoints, dtype=np.int64).reshape(-1))
        if ck.size == 0 or ck[0] < 1 or ck[-1] > horizon:
            raise ValueError(f"checkpoints must be round counts in [1, {horizon}], got {checkpoints!r}")
    if replace is not None:
        if not isinstance(replace, (RewardReplacement, RoundReplacement)):
            raise ValueError(
                f"replace must be a RewardReplacement, RoundReplacement or None, got {type(replace).__name__}"
            )
        replace.check(horizon, env.n_arms)
    return horizon, repetitions, ck


def _plan(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    ck: np.ndarray,
    record_actions: bool,
    executor: Executor | None,
    rep_chunk: int | None,
    chunk_size: int | None,
    memory: int,
) -> tuple[int, int]:
    """(repetitions per block, rounds per chunk), refusing up front a run that would not fit."""
    if rep_chunk is None:
        rep_chunk = min(256, repetitions) if executor is None else max(1, math.ceil(repetitions / 8))
    rep_chunk = check_integer("rep_chunk", rep_chunk)
    block = min(rep_chunk, repetitions)
    chunk = (
        chunk_rounds(block, env.n_arms, memory)
        if chunk_size is None
        else check_integer("chunk_size", chunk_size)
    )
    need = estimated_bytes(
        repetitions,
        block,
        env.n_arms,
        horizon,
        ck.size,
        chunk,
        len(policies),
        max(1, math.prod(env.structure.shape)),
        record_actions,
    )
    if need > memory_limit():
        raise ValueError(
            f"repetitions: this simulation would hold about {need / 2**30:.3g} GiB (R = {repetitions}, "
            f"N = {env.n_arms}, T = {horizon}{', actions recorded' if record_actions else ''}), more than "
            f"the {memory_limit() / 2**30:.3g} GiB this machine allows; use fewer repetitions, arms or rounds"
        )
    return rep_chunk, chunk


def _results(
    policies: list[Policy],
    parts: list[list[dict[str, Any]]],
    env: Environment,
    horizon: int,
    repetitions: int,
    root: np.random.SeedSequence,
    ck: np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    elapsed: float,
) -> list[SimulationResult]:
    """One :class:`SimulationResult` per policy from the blocks' tallies."""
    entropy = root.entropy if isinstance(root.entropy, int) else None
    out = []
    for k, policy in enumerate(policies):
        cat = lambda key, k=k: np.concatenate([p[k][key] for p in parts], axis=0)  # noqa: E731
        out.append(
            SimulationResult(
                policy=policy.name,
                env=env.spec,
                horizon=horizon,
                repetitions=repetitions,
                seed_entropy=entropy,
                means=env.means,
                checkpoints=ck,
                pseudo_regret=cat("pseudo"),
                empirical_regret=cat("emp"),
                pulls=cat("pulls"),
                actions=cat("actions") if record_actions else None,
                replacement=replace,
                elapsed=elapsed,
                ledgers=tuple(led for p in parts for led in p[k]["ledgers"]),
            )
        )
    return out


def _simulate(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    seed: int | np.random.SeedSequence | None,
    checkpoints: int | Sequence[int],
    record_actions: bool,
    replace: Replacement | None,
    executor: Executor | None,
    rep_chunk: int | None,
    chunk_size: int | None,
    memory: int,
    progress: bool,
) -> list[SimulationResult]:
    horizon, repetitions, ck = _checked(policies, env, horizon, repetitions, checkpoints, replace)
    rep_chunk, chunk = _plan(
        policies, env, horizon, repetitions, ck, record_actions, executor, rep_chunk, chunk_size, memory
    )
    root = root_seed(seed)
    blocks = [list(range(i, min(repetitions, i + rep_chunk))) for i in range(0, repetitions, rep_chunk)]
    single = len(policies) == 1
    run = _run_reps if single else _run_reps_many
    args = (policies[0] if single else policies, env, horizon)
    tail = (root, ck, record_actions, replace, chunk)

    from tqdm import tqdm

    start = time.perf_counter()
    total = horizon * repetitions * len(policies)
    desc = policies[0].name if single else f"{len(policies)} policies"
    with tqdm(total=total, disable=not progress, desc=desc, unit="step", unit_scale=True, leave=False) as bar:
        if executor is None:
            parts = [run(*args, blk, *tail, bar.update) for blk in blocks]
        else:
            futures = [executor.submit(run, *args, blk, *tail) for blk in blocks]
            parts = []
            for blk, fut in zip(blocks, futures):
                parts.append(fut.result())
                bar.update(horizon * len(blk) * len(policies))
    elapsed = time.perf_counter() - start
    if single:
        parts = [[p] for p in parts]
    return _results(policies, parts, env, horizon, repetitions, root, ck, record_actions, replace, elapsed)
