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
from typing import TYPE_CHECKING, Any

import numpy as np

from bandits.engine.memory import DEFAULT_MEMORY, ChunkPlan, estimated_bytes, memory_limit
from bandits.engine.results import RegretTally, SimulationResult, log_checkpoints
from bandits.engine.streams import RepStreams, StreamSeeds, rep_streams, root_seed
from bandits.engine.tables import _Tables
from bandits.environments import Environment
from bandits.policy import JointContext, JointPlayer, Outcomes, Policy, RunContext
from dpaudit.ledger import RunLedgers
from dpaudit.numerics import unique
from dpaudit.tasks import run_tasks
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

if TYPE_CHECKING:  # pragma: no cover (annotations only: concurrent.futures loads logging and threads)
    from concurrent.futures import Executor

    from bandits.engine.replacement import Replacement

__all__ = [
    "simulate",
    "simulate_many",
]


def _context(
    env: Environment, horizon: int, streams: Sequence[RepStreams], transcripts: bool = False,
    recording: bool = True,
) -> RunContext:
    ledgers = RunLedgers(len(streams), recording)
    if transcripts:  # keep what the mechanisms release (an audit's grey-box view)
        from dpaudit.transcripts import Transcripts

        ledgers.transcripts = Transcripts(len(streams))
    streams = tuple(streams)
    return RunContext(
        env.n_arms,
        horizon,
        env.structure,
        RepRandom.deferred(len(streams), StreamSeeds(streams, "policy")),
        RepRandom.deferred(len(streams), StreamSeeds(streams, "privacy")),
        ledgers,
    )


def _released(run: RunContext) -> dict[str, np.ndarray] | None:
    """Each release key's column of first values (NaN: no such release), if the run kept
    transcripts."""
    tr = run.ledgers.transcripts
    return None if tr is None else tr.columns()


def _run_reps(
    policy: Policy,
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    chunks: ChunkPlan,
    transcripts: bool = False,
    ledgers: bool = True,
    on_progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Simulate repetitions ``reps`` (one vectorised block). Module-level: picklable."""
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    run = _context(env, horizon, streams, transcripts, ledgers)
    agent = policy.agent(run)
    streamed = replace is None and agent.reads_outcome_stream
    if streamed:
        tables.use_stream()
    tally = RegretTally(env, horizon, len(reps), checkpoints, record_actions)
    bounds = chunks.bounds(horizon, agent.stream_start if streamed else None)
    for t0, t1 in zip(bounds, bounds[1:]):
        outcomes = tables.outcomes(t0, t1, replace, policy.feedback)
        actions = agent.run_chunk(t0, t1, outcomes)
        seen = outcomes.observed
        tally.add(t0, t1, actions, outcomes.table if seen is None else None, observed=seen)
        if on_progress is not None:
            on_progress((t1 - t0) * len(reps))
    agent.finish()
    return {**tally.result(), "ledgers": tuple(run.ledgers), "transcripts": _released(run), "reps": len(reps)}


def _run_reps_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    reps: Sequence[int],
    root: np.random.SeedSequence,
    checkpoints: np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    chunks: ChunkPlan,
    transcripts: bool = False,
    ledgers: bool = True,
    on_progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`_run_reps` for several policies at once (one list entry per policy), sharing the
    outcome table of each chunk; the agents of a policy class with a joint player
    (:attr:`bandits.policy.Policy.joint_player`) are played by it; see :func:`simulate_many`."""
    R = len(reps)
    streams = [rep_streams(root, r) for r in reps]
    tables = _Tables(env, reps, streams)
    # fresh generators per agent
    runs = [_context(env, horizon, streams, transcripts, ledgers) for _ in policies]
    agents = [p.agent(run) for p, run in zip(policies, runs)]
    tallies = [RegretTally(env, horizon, R, checkpoints, record_actions) for _ in policies]
    chunk_size = chunks.rounds
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
        for i, played in enumerate(acts):
            assert played is not None  # every agent plays alone or with its joint player
            tallies[i].add(t0, t1, played, table)
        if on_progress is not None:
            on_progress((t1 - t0) * R * len(agents))
    for a in agents:
        a.finish()
    return [{**t.result(), "ledgers": tuple(run.ledgers), "transcripts": _released(run), "reps": R}
            for t, run in zip(tallies, runs)]  # fmt: skip


def simulate(
    policy: Policy,
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] | np.ndarray = 50,
    record_actions: bool = False,
    replace: Replacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int | None = None,
    memory: int = DEFAULT_MEMORY,
    progress: bool = True,
    transcripts: bool = False,
    ledgers: bool = True,
) -> SimulationResult:
    """Run ``policy`` on ``env`` for ``horizon`` rounds, ``repetitions`` times.

    Args:
        checkpoints: number of log-spaced checkpoints, or explicit round counts in [1, T]; an
            empty sequence tracks no regret at all (the audits, which read actions, pulls or
            transcripts only: the regret's running sums are most of a short run's cost).
        record_actions: keep the (R, T, ...) actions (int8 for N ≤ 127).
        replace: neighbouring stream — one reward (:class:`~bandits.engine.replacement.RewardReplacement`)
            or one round's outcome vector (:class:`~bandits.engine.replacement.RoundReplacement`) is
            replaced in every repetition; the policy randomness is unchanged.
        executor: anything with ``submit`` (e.g. ``concurrent.futures`` executors); blocks of
            ``rep_chunk`` repetitions are submitted as tasks. Results are identical with and
            without an executor.
        rep_chunk: repetitions per vectorised block (default: all, capped at 256; with an
            executor, R divided by its number of workers, or by 8 if it does not say).
        chunk_size: rounds per pre-drawn block (default: :func:`chunk_rounds` of ``memory``, and
            where the agent reads the outcome stream instead of a drawn table, of ``memory`` for
            one arm's worth of cells, :class:`~bandits.engine.memory.ChunkPlan`); does not change
            the results.
        memory: bytes a block may hold for its chunk of rounds (default 64 MiB).
        progress: show a tqdm progress bar.
        transcripts: keep every repetition's released values (``SimulationResult.transcripts``:
            the first value per release key; :mod:`dpaudit.transcripts`), for audits.
        ledgers: record every repetition's releases (``SimulationResult.ledgers``, what the
            ledger check reads); False for runs that read only actions or transcripts (an
            audit's trajectories), which then skip building the entries.

    Raises:
        ValueError: before anything runs, naming the parameter: a bad argument, or a run whose
            arrays (``estimated_bytes``), with what its policy says it holds a round (ledgers, the
            cascading ones; tables, the Lazy ones), would not fit (``memory_limit``).
    """
    return simulate_many(
        [policy], env, horizon, repetitions, seed, checkpoints=checkpoints, record_actions=record_actions,
        replace=replace, executor=executor, rep_chunk=rep_chunk, chunk_size=chunk_size, memory=memory,
        progress=progress, transcripts=transcripts, ledgers=ledgers,
    )[0]  # fmt: skip


def simulate_many(
    policies: Sequence[Policy],
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    checkpoints: int | Sequence[int] | np.ndarray = 50,
    record_actions: bool = False,
    replace: Replacement | None = None,
    executor: Executor | None = None,
    rep_chunk: int | None = None,
    chunk_size: int | None = None,
    memory: int = DEFAULT_MEMORY,
    progress: bool = True,
    transcripts: bool = False,
    ledgers: bool = True,
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
                     executor, rep_chunk, chunk_size, memory, progress, transcripts, ledgers)  # fmt: skip


def _checked(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    checkpoints: int | Sequence[int] | np.ndarray,
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
        ck = unique(np.asarray(checkpoints, dtype=np.int64).reshape(-1))
        if ck.size and (ck[0] < 1 or ck[-1] > horizon):
            raise ValueError(f"checkpoints must be round counts in [1, {horizon}], got {checkpoints!r}")
    if replace is not None:
        from bandits.engine.replacement import RewardReplacement, RoundReplacement

        if not isinstance(replace, (RewardReplacement, RoundReplacement)):
            raise ValueError(
                f"replace must be a RewardReplacement, RoundReplacement or None, got {type(replace).__name__}"
            )
        replace.check(horizon, env.n_arms)
    return horizon, repetitions, ck


def _per_worker(repetitions: int, executor: Executor) -> int:
    """Repetitions per block on an executor: one block per worker (a block's rounds cost about the
    same Python-level work whatever its repetitions, so more blocks than workers only repeat it;
    with 5 blocks of 2 repetitions on 2 workers a cascade run took 2.2× its one-process time),
    capped at 256; 8 workers assumed when the executor does not say (``_max_workers``)."""
    workers = getattr(executor, "_max_workers", None)
    workers = workers if isinstance(workers, int) and workers > 0 else 8
    return max(1, min(256, math.ceil(repetitions / workers)))


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
) -> tuple[int, ChunkPlan]:
    """(repetitions per block, rounds per chunk), refusing up front a run that would not fit."""
    if rep_chunk is None:
        rep_chunk = min(256, repetitions) if executor is None else _per_worker(repetitions, executor)
    rep_chunk = check_integer("rep_chunk", rep_chunk)
    block = min(rep_chunk, repetitions)
    if chunk_size is None:
        plan = ChunkPlan.budget(block, env.n_arms, memory)
    else:
        plan = ChunkPlan(check_integer("chunk_size", chunk_size), chunk_size)
    chunk = plan.rounds
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
    return rep_chunk, plan


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
                transcripts=_merged_transcripts(parts, k),
            )
        )
    return out


def _refuse_unfitting_ledgers(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    ledgers: bool,
    ck: np.ndarray,
    record_actions: bool,
    rep_chunk: int,
    chunk: ChunkPlan,
) -> None:
    """Refuse, before it starts, a run whose state per round would not fit beside its arrays
    (``estimated_bytes``, which :func:`_plan` checks alone): the ledgers naming the rounds each
    release depends on (``ledger_bytes_per_round`` a round and repetition: the cascading policies)
    and tables indexed by round (``table_bytes_per_round``: the Lazy ones' log(t + 1)); 0 when a
    policy does not say. The estimate is linear in T: the most rounds named fit. Reads and raises."""
    rate = sum(getattr(p, "ledger_bytes_per_round", 0) for p in policies) if ledgers else 0
    table = sum(getattr(p, "table_bytes_per_round", 0) for p in policies)
    if rate == 0 and table == 0:
        return
    block, size = min(rep_chunk, repetitions), max(1, math.prod(env.structure.shape))
    fixed, one = (  # the arrays at horizons 0 and 1: their fixed part, then their bytes a round
        estimated_bytes(repetitions, block, env.n_arms, t, ck.size, chunk.rounds, len(policies), size,
                        record_actions)  # fmt: skip
        for t in (0, 1)
    )
    per_round = repetitions * rate + table + max(0, one - fixed)
    need, limit = fixed + horizon * per_round, memory_limit()
    if need > limit:
        held = (
            f"the ledgers of {repetitions} repetition(s) would hold about "
            f"{horizon * repetitions * rate / 2**30:.3g} GiB ({rate} bytes a round and repetition: the "
            f"rounds each release depends on, kept for the ledger check)" if rate else ""
        ) + (" and " if rate and table else "") + (
            f"the tables indexed by round would hold about {horizon * table / 2**30:.3g} GiB ({table} "
            f"bytes a round)" if table else ""
        )  # fmt: skip
        raise ValueError(
            f"horizon: {held}, {need / 2**30:.3g} GiB with the simulation's arrays, more than the "
            f"{limit / 2**30:.3g} GiB this machine allows; use at most {max(0, limit - fixed) // per_round} "
            f"rounds, or fewer repetitions"
        )


def _merged_transcripts(parts: list[list[dict[str, Any]]], k: int) -> dict[str, np.ndarray] | None:
    """Policy ``k``'s released values over the blocks ``parts`` (None: not kept)."""
    if parts[0][k]["transcripts"] is None:
        return None
    from dpaudit.transcripts import merge

    return merge([p[k]["transcripts"] for p in parts], [p[k]["reps"] for p in parts])


def _simulate(
    policies: list[Policy],
    env: Environment,
    horizon: int,
    repetitions: int,
    seed: int | np.random.SeedSequence | None,
    checkpoints: int | Sequence[int] | np.ndarray,
    record_actions: bool,
    replace: Replacement | None,
    executor: Executor | None,
    rep_chunk: int | None,
    chunk_size: int | None,
    memory: int,
    progress: bool,
    transcripts: bool = False,
    ledgers: bool = True,
) -> list[SimulationResult]:
    horizon, repetitions, ck = _checked(policies, env, horizon, repetitions, checkpoints, replace)
    rep_chunk, chunk = _plan(
        policies, env, horizon, repetitions, ck, record_actions, executor, rep_chunk, chunk_size, memory
    )
    _refuse_unfitting_ledgers(
        policies, env, horizon, repetitions, ledgers, ck, record_actions, rep_chunk, chunk
    )
    root = root_seed(seed)
    blocks = [list(range(i, min(repetitions, i + rep_chunk))) for i in range(0, repetitions, rep_chunk)]
    single = len(policies) == 1
    run = _run_reps if single else _run_reps_many
    args = (policies[0] if single else policies, env, horizon)
    tail = (root, ck, record_actions, replace, chunk, transcripts, ledgers)

    start = time.perf_counter()
    desc = policies[0].name if single else f"{len(policies)} policies"
    sizes = [horizon * len(blk) * len(policies) for blk in blocks]
    parts: list[Any] = run_tasks(run, [(*args, blk, *tail) for blk in blocks], executor=executor,
                                 progress=progress, desc=desc, unit="step", unit_scale=True, sizes=sizes,
                                 report_progress=True)  # fmt: skip
    elapsed = time.perf_counter() - start
    if single:
        parts = [[p] for p in parts]
    return _results(policies, parts, env, horizon, repetitions, root, ck, record_actions, replace, elapsed)
