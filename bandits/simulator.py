"""Regret simulation, vectorised across repetitions, with common random numbers.

Randomness layout (no global RNG anywhere). From one root ``SeedSequence(seed)``,
repetition ``r`` owns ``SeedSequence(entropy, spawn_key=(r,))`` and its three streams

* ``(r, 0)`` rewards — uniforms turned into rewards by the environment's inverse CDF,
  drawn as a (T, N) table in time chunks (chunk sizes do not change the numbers);
* ``(r, 1)`` policy sampling (e.g. the Gaussian-TS θ's);
* ``(r, 2)`` privacy noise of mechanisms a policy may hold.

So repetition r's rewards are the same for every policy and for every number of
repetitions, chunking or executor (common random numbers); and a *neighbouring stream*
(``replace=RewardReplacement(round=τ, arm=j, value=v)``) changes exactly one reward while
leaving the policy randomness untouched.

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.policies import GaussianTS
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
from typing import Any, NamedTuple

import numpy as np

from bandits.environments import Environment, RewardTableEnv
from bandits.policies import GaussianTSAgent, Policy, play_gaussian_ts_together

__all__ = [
    "RewardReplacement",
    "RepStreams",
    "SimulationResult",
    "simulate",
    "simulate_many",
    "rep_streams",
    "reward_table",
    "log_checkpoints",
]

DEFAULT_CHUNK = 8192


@dataclass(frozen=True)
class RewardReplacement:
    """Replace the reward of ``round`` (0-based) on ``arm`` by ``value`` in every repetition.

    >>> RewardReplacement(round=3, arm=1, value=1.0)
    RewardReplacement(round=3, arm=1, value=1.0)
    >>> RewardReplacement(round=-1, arm=0, value=0.0)
    Traceback (most recent call last):
    ...
    ValueError: round must be an integer >= 0, got -1
    """

    round: int
    arm: int
    value: float

    def __post_init__(self) -> None:
        for name in ("round", "arm"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
            object.__setattr__(self, name, int(v))
        try:
            val = float(self.value)
        except (TypeError, ValueError):
            raise ValueError(f"value must be a number in [0, 1], got {self.value!r}") from None
        if not (0.0 <= val <= 1.0):
            raise ValueError(f"value must be in [0, 1], got {self.value!r}")
        object.__setattr__(self, "value", val)


class RepStreams(NamedTuple):
    """The three seed sequences of one repetition."""

    rewards: np.random.SeedSequence
    policy: np.random.SeedSequence
    privacy: np.random.SeedSequence


def _root(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, a SeedSequence or None, got {seed!r}")
    return np.random.SeedSequence(seed)


def rep_streams(seed: int | np.random.SeedSequence, rep: int) -> RepStreams:
    """The seed sequences of repetition ``rep`` (independent of how many repetitions run).

    >>> a, b = rep_streams(7, 3), rep_streams(7, 3)
    >>> a.policy.generate_state(1).tolist() == b.policy.generate_state(1).tolist()
    True
    """
    root = _root(seed)
    key = tuple(root.spawn_key) + (int(rep),)
    return RepStreams(
        *(
            np.random.SeedSequence(root.entropy, spawn_key=key + (k,), pool_size=root.pool_size)
            for k in range(3)
        )
    )


def reward_table(
    env: Environment,
    horizon: int,
    seed: int | np.random.SeedSequence,
    rep: int = 0,
    replace: RewardReplacement | None = None,
) -> np.ndarray:
    """The (T, N) reward table that :func:`simulate` uses for repetition ``rep``.

    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.policies import UCB1
    >>> env = BernoulliEnv((0.9, 0.1))
    >>> tab = reward_table(env, 5, seed=3)
    >>> res = simulate(UCB1(), env, 5, repetitions=1, seed=3, record_actions=True, progress=False)
    >>> obs = tab[np.arange(5), res.actions[0]]
    >>> bool(np.isclose(res.empirical_regret[0, -1], 0.9 * 5 - obs.sum()))
    True
    """
    rng = np.random.Generator(np.random.PCG64(rep_streams(seed, rep).rewards))
    tab = np.array(env.reward_chunk(rep, 0, horizon, rng), dtype=float)
    if replace is not None and replace.round < horizon:
        tab[replace.round, replace.arm] = replace.value
    return tab


def log_checkpoints(horizon: int, num: int = 50) -> np.ndarray:
    """About ``num`` log-spaced round counts in [1, T], always including T.

    >>> log_checkpoints(1000, 4).tolist()
    [1, 10, 100, 1000]
    """
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 1:
        raise ValueError(f"checkpoints must be an integer >= 1, got {num!r}")
    pts = np.unique(np.round(np.geomspace(1, horizon, num)).astype(np.int64))
    return np.unique(np.append(pts, horizon))


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Regret curves of one (policy, environment) pair over R repetitions.

    Arrays: ``checkpoints`` (C,) round counts; ``pseudo_regret`` and ``empirical_regret``
    (R, C): Σ_{s<t}(μ* − μ_{a_s}) and μ*·t − Σ_{s<t} r_s; ``pulls`` (R, N) final counts;
    ``actions`` (R, T) or None.
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
    replacement: RewardReplacement | None = None
    elapsed: float = 0.0

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

    def band(self, kind: str = "pseudo", z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) = mean ∓ z·stderr."""
        m, s = self.mean(kind), self.stderr(kind)
        return m - z * s, m + z * s

    def final(self, kind: str = "pseudo") -> float:
        """Mean regret at the horizon."""
        return float(self.mean(kind)[-1])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (arrays as nested lists).

        >>> import json
        >>> from bandits.environments import BernoulliEnv
        >>> from bandits.policies import UCB1
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
        self.gaps, self.mu_star = env.gaps, env.best_mean
        C = checkpoints.size
        self.pseudo = np.empty((R, C))
        self.emp = np.empty((R, C))
        self.pulls = np.zeros((R, N), dtype=np.int64)
        self.acts = np.empty((R, horizon), dtype=_action_dtype(N)) if record_actions else None
        self.cum_gap = np.zeros(R)
        self.cum_rew = np.zeros(R)
        self.ci = 0

    def add(self, t0: int, t1: int, a: np.ndarray, table: np.ndarray) -> None:
        """Record the arms ``a`` (R, t1−t0) pulled against ``table`` (R, t1−t0, N)."""
        R, N, checkpoints = self.R, self.N, self.ck
        obs = np.take_along_axis(table, a[:, :, None], axis=2)[:, :, 0]
        g = np.cumsum(self.gaps[a], axis=1)
        g += self.cum_gap[:, None]
        w = np.cumsum(obs, axis=1)
        w += self.cum_rew[:, None]
        ci = cj = self.ci
        while cj < checkpoints.size and checkpoints[cj] <= t1:
            cj += 1
        if cj > ci:
            loc = checkpoints[ci:cj] - t0 - 1
            self.pseudo[:, ci:cj] = g[:, loc]
            self.emp[:, ci:cj] = (self.mu_star * checkpoints[ci:cj])[None, :] - w[:, loc]
            self.ci = cj
        self.cum_gap, self.cum_rew = g[:, -1].copy(), w[:, -1].copy()
        self.pulls += np.bincount((a + (np.arange(R) * N)[:, None]).ravel(), minlength=R * N).reshape(R, N)
        if self.acts is not None:
            self.acts[:, t0:t1] = a

    def result(self) -> dict[str, np.ndarray]:
        return {"pseudo": self.pseudo, "emp": self.emp, "pulls": self.pulls, "actions": self.acts}


class _Tables:
    """The reward tables of repetitions ``reps``, chunk by chunk (as :func:`reward_table`)."""

    def __init__(self, env: Environment, reps: Sequence[int], streams: Sequence[RepStreams]) -> None:
        self.env, self.reps = env, list(reps)
        # a RewardTableEnv with one (T, N) table draws nothing: share it, build no reward RNGs
        self.shared = isinstance(env, RewardTableEnv) and env.table.ndim == 2
        self.rngs = (
            [None] * len(reps)
            if self.shared
            else [np.random.Generator(np.random.PCG64(s.rewards)) for s in streams]
        )

    def chunk(self, t0: int, t1: int, replace: RewardReplacement | None) -> np.ndarray:
        env, R, N = self.env, len(self.reps), self.env.n_arms
        if self.shared and not (replace is not None and t0 <= replace.round < t1):
            # read-only view of the shared table (reward_chunk validates the horizon), no copies
            return np.broadcast_to(env.reward_chunk(self.reps[0], t0, t1, None), (R, t1 - t0, N))
        table = np.empty((R, t1 - t0, N))
        for i, (r, g) in enumerate(zip(self.reps, self.rngs)):
            table[i] = env.reward_chunk(r, t0, t1, g)
        if replace is not None and t0 <= replace.round < t1:
            table[:, replace.round - t0, replace.arm] = replace.value
        return table


def _run_reps(
    policy: Policy,
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: RewardReplacement | None,
    chunk_size: int,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Simulate repetitions ``reps`` (one vectorised block). Module-level: picklable."""
    R, N = len(reps), env.n_arms
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    agent = policy.agent(N, horizon, [s.policy for s in streams])
    tally = _Tally(env, horizon, R, checkpoints, record_actions)
    for t0 in range(0, horizon, chunk_size):
        t1 = min(horizon, t0 + chunk_size)
        table = tables.chunk(t0, t1, replace)
        tally.add(t0, t1, agent.run_chunk(t0, t1, table), table)
        if on_progress is not None:
            on_progress((t1 - t0) * R)
    return tally.result()


def _run_reps_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: RewardReplacement | None,
    chunk_size: int,
    on_progress: Callable[[int], None] | None = None,
) -> list[dict[str, np.ndarray]]:
    """:func:`_run_reps` for several policies at once (one list entry per policy), sharing the
    reward table and the Gaussian-TS noise of each chunk; see :func:`simulate_many`."""
    R, N = len(reps), env.n_arms
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    seeds = [s.policy for s in streams]
    agents = [p.agent(N, horizon, seeds) for p in policies]
    tallies = [_Tally(env, horizon, R, checkpoints, record_actions) for _ in policies]
    gts = [isinstance(a, GaussianTSAgent) for a in agents]
    # one generator per repetition draws the Gaussian-TS noise for all agents: every
    # GaussianTSAgent draws an (R, C, N) block per chunk from these same seeds, whatever (b, c)
    noise_rngs = [np.random.Generator(np.random.PCG64(s)) for s in seeds] if any(gts) else []
    sampled = [False] * len(agents)  # has the agent played a sampling round yet?
    for t0 in range(0, horizon, chunk_size):
        t1 = min(horizon, t0 + chunk_size)
        table = tables.chunk(t0, t1, replace)
        if noise_rngs:
            Z = np.empty((R, t1 - t0, N))
            for r, g in enumerate(noise_rngs):
                g.standard_normal(out=Z[r])
        acts: list[np.ndarray | None] = [None] * len(agents)
        together = []
        for i, (a, g) in enumerate(zip(agents, gts)):
            if not g:
                acts[i] = a.run_chunk(t0, t1, table)
                continue
            a.use_noise(t0, Z)
            # the step loop, shared, for agents whose speculation failed in their previous
            # sampling chunk, and for the first one (speculation pays off only for long runs of
            # one arm, and a failed attempt costs more than a shared step loop)
            if t1 > a._prepull_end and (a.policy.engine == "step" or not (sampled[i] and a._speculating)):
                together.append(i)
            else:
                acts[i] = a.play(t0, t1, table)
        played = play_gaussian_ts_together([agents[i] for i in together], t0, t1, table, Z)
        for i, act in zip(together, played):
            acts[i] = act
        for i, (a, act) in enumerate(zip(agents, acts)):
            tallies[i].add(t0, t1, act, table)
            if gts[i] and t1 > a._prepull_end:
                sampled[i] = True
        if on_progress is not None:
            on_progress((t1 - t0) * R * len(agents))
    return [t.result() for t in tallies]


def simulate(
    policy: Policy,
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] = 50,
    record_actions: bool = False,
    replace: RewardReplacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = True,
) -> SimulationResult:
    """Run ``policy`` on ``env`` for ``horizon`` rounds, ``repetitions`` times.

    Args:
        checkpoints: number of log-spaced checkpoints, or explicit round counts in [1, T].
        record_actions: keep the (R, T) action sequences (int8 for N ≤ 127).
        replace: neighbouring stream — the reward of (round, arm) is replaced in every
            repetition; the policy randomness is unchanged.
        executor: anything with ``submit`` (e.g. ``concurrent.futures`` executors); blocks of
            ``rep_chunk`` repetitions are submitted as tasks. Results are identical with and
            without an executor.
        rep_chunk: repetitions per vectorised block (default: all, capped at 256; with an
            executor, about R/8).
        chunk_size: rounds per pre-drawn block of rewards/noise (memory ≈ 32·chunk·R·N bytes for Gaussian TS);
            does not change the results.
        progress: show a tqdm progress bar.
    """
    return _simulate(
        [policy], env, horizon, repetitions, seed, checkpoints, record_actions, replace, executor,
        rep_chunk, chunk_size, progress, policy.name,
    )[0]


def simulate_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] = 50,
    record_actions: bool = False,
    replace: RewardReplacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    progress: bool = True,
) -> list[SimulationResult]:
    """``[simulate(p, env, horizon, repetitions, seed, ...) for p in policies]``, bit-identical
    (tested), but faster for many :class:`~bandits.policies.GaussianTS` configurations.

    All policies run in one pass over time: each chunk's reward table and Gaussian-TS noise are
    drawn once and shared (common random numbers make them the same for every policy), and the
    Gaussian-TS agents that explore heavily (their speculative engine fails: short runs of one
    arm) are played *together* in one step loop over stacked (policy × repetition) rows with
    per-row (b, c) (:func:`~bandits.policies.play_gaussian_ts_together`), so the per-round Python
    overhead is paid once instead of once per policy. The others keep their speculative engine;
    each agent is re-assigned chunk by chunk with the engine's own rule. Other policies run as in
    :func:`simulate`. The arguments are those of :func:`simulate`; ``elapsed`` of every result is
    the time of the whole call.

    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.policies import GaussianTS
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
    return _simulate(
        policies, env, horizon, repetitions, seed, checkpoints, record_actions, replace, executor,
        rep_chunk, chunk_size, progress, f"{len(policies)} policies",
    )


def _simulate(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    seed: int | np.random.SeedSequence | None,
    checkpoints: int | Sequence[int],
    record_actions: bool,
    replace: RewardReplacement | None,
    executor: Executor | None,
    rep_chunk: int | None,
    chunk_size: int,
    progress: bool,
    desc: str,
) -> list[SimulationResult]:
    for policy in policies:
        if not isinstance(policy, Policy):
            raise ValueError(f"policy must be a bandits.policies.Policy, got {type(policy).__name__}")
    if not isinstance(env, Environment):
        raise ValueError(f"env must be a bandits.environments.Environment, got {type(env).__name__}")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, (int, np.integer)) or repetitions < 1:
        raise ValueError(f"repetitions must be an integer >= 1, got {repetitions!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    horizon, repetitions = int(horizon), int(repetitions)
    if isinstance(checkpoints, (int, np.integer)) and not isinstance(checkpoints, bool):
        ck = log_checkpoints(horizon, int(checkpoints))
    else:
        ck = np.unique(np.asarray(checkpoints, dtype=np.int64).reshape(-1))
        if ck.size == 0 or ck[0] < 1 or ck[-1] > horizon:
            raise ValueError(f"checkpoints must be round counts in [1, {horizon}], got {checkpoints!r}")
    if replace is not None and not isinstance(replace, RewardReplacement):
        raise ValueError(f"replace must be a RewardReplacement or None, got {type(replace).__name__}")
    if replace is not None and replace.arm >= env.n_arms:
        raise ValueError(f"replace.arm must be in [0, {env.n_arms - 1}], got {replace.arm}")
    if rep_chunk is None:
        rep_chunk = min(256, repetitions) if executor is None else max(1, math.ceil(repetitions / 8))
    elif isinstance(rep_chunk, bool) or not isinstance(rep_chunk, (int, np.integer)) or rep_chunk < 1:
        raise ValueError(f"rep_chunk must be an integer >= 1, got {rep_chunk!r}")
    root = _root(seed)
    blocks = [list(range(i, min(repetitions, i + rep_chunk))) for i in range(0, repetitions, rep_chunk)]
    single = len(policies) == 1
    run = _run_reps if single else _run_reps_many
    args = (policies[0] if single else policies, env, horizon)
    tail = (root, ck, record_actions, replace, int(chunk_size))

    from tqdm.auto import tqdm

    start = time.perf_counter()
    with tqdm(
        total=horizon * repetitions * len(policies),
        disable=not progress,
        desc=desc,
        unit="step",
        unit_scale=True,
        leave=False,
    ) as bar:
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
            )
        )
    return out
