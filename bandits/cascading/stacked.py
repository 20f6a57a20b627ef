"""Many configurations of one cascade algorithm in one vectorised pass (the ε grids of Wang et al. 2021).

Figure 1(e) sweeps ε over 101 values × 10 runs: one :func:`bandits.engine.simulator.simulate` per value
would pay the per-round Python overhead 100 times. :func:`simulate_stacked` stacks P policies
that share a :meth:`~bandits.cascading.policies.CascadePolicy.stack_key` (same algorithm, noise law,
initialisation and tie rule; ε, noise factor, c₁ may differ) into one agent of P × R rows: row
``p·R + r`` is policy p on repetition r, with repetition r's generators and outcome table. Every
row therefore plays exactly what :func:`~bandits.engine.simulator.simulate` plays for that policy — the
same actions, regret curves (same floating-point sums) and, with ``record=True``, ledgers (tested).

Example:
    >>> from bandits.environments.cascade import cascade_instance
    >>> from bandits.cascading.policies import CascadeLDP
    >>> from bandits.engine.simulator import simulate
    >>> env = cascade_instance(8, 2)
    >>> pols = [CascadeLDP(e, "laplace", noise_factor=0.01) for e in (0.5, 2.0)]
    >>> res = simulate_stacked(pols, env, 300, 3, seed=1)
    >>> alone = simulate(pols[1], env, 300, 3, 1, progress=False)
    >>> bool((res[1].pseudo_regret == alone.pseudo_regret).all())
    True
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from bandits.cascading.policies import CascadePolicy
from bandits.engine.memory import chunk_rounds
from bandits.engine.results import RegretTally, SimulationResult, log_checkpoints
from bandits.engine.streams import RepStreams, rep_streams, root_seed
from bandits.environments import Environment
from bandits.policy import Outcomes, RunContext
from dpaudit.ledger import Ledger, RunLedgers
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

__all__ = ["simulate_stacked"]


class _Tiled:
    """The (P·R, C, N) outcome table of P stacked copies of R repetitions, built one round at a
    time (``table[:, i]``) instead of copying the chunk P times; the compiled round loop
    (:mod:`bandits.cascading._kernel`) reads ``base`` directly (row p·R + r is repetition r)."""

    def __init__(self, base: np.ndarray, copies: int) -> None:
        self.base, self.copies = base, copies
        self.shape = (copies * base.shape[0],) + base.shape[1:]

    def __getitem__(self, index: tuple) -> np.ndarray:
        rows, i = index
        if rows != slice(None) or not isinstance(i, (int, np.integer)):
            raise IndexError("a stacked outcome table is read one round at a time: table[:, i]")
        return np.tile(self.base[:, i], (self.copies, 1))


def simulate_stacked(
    policies: Sequence[CascadePolicy],
    env: Environment,
    horizon: int,
    repetitions: int = 10,
    seed: int | np.random.SeedSequence = 0,
    *,
    checkpoints: int | Sequence[int] = 50,
    chunk_size: int | None = None,
    record: bool = False,
) -> list[SimulationResult]:
    """One :class:`~bandits.engine.results.SimulationResult` per policy, identical to
    ``simulate(policy, env, horizon, repetitions, seed)`` (module docstring). The ledgers are
    recorded only with ``record=True`` (an experiment over a grid needs the regret; recording
    every report of 1000 rows costs more than playing them)."""
    pols = list(policies)
    if not pols or not all(isinstance(p, CascadePolicy) for p in pols):
        raise ValueError("policies must be a non-empty sequence of cascade policies")
    if len({p.stack_key() for p in pols}) != 1:
        raise ValueError("policies must share one stack_key (same algorithm, noise, init and ties)")
    T = check_integer("horizon", horizon)
    R = check_integer("repetitions", repetitions)
    for p in pols:
        p.check_structure(env.structure)
    ck = (
        log_checkpoints(T, checkpoints)
        if isinstance(checkpoints, (int, np.integer))
        else np.unique(np.asarray(checkpoints, dtype=np.int64))
    )
    if ck.size == 0 or ck[0] < 1 or ck[-1] > T:
        raise ValueError(f"checkpoints must lie in [1, {T}]")
    root = root_seed(seed)
    streams = [rep_streams(root, r) for r in range(R)]
    P = len(pols)
    chunk = chunk_rounds(P * R, env.n_arms) if chunk_size is None else check_integer("chunk_size", chunk_size)
    start = time.perf_counter()
    tally, ledgers = _play(pols, env, T, R, streams, ck, chunk, record)
    elapsed = time.perf_counter() - start
    res = tally.result()
    out = []
    for i, p in enumerate(pols):
        sl = slice(i * R, (i + 1) * R)
        out.append(
            SimulationResult(
                policy=p.name,
                env=env.spec,
                horizon=T,
                repetitions=R,
                seed_entropy=root.entropy if isinstance(root.entropy, int) else None,
                means=env.means,
                checkpoints=ck,
                pseudo_regret=res["pseudo"][sl].copy(),
                empirical_regret=res["emp"][sl].copy(),
                pulls=res["pulls"][sl].copy(),
                elapsed=elapsed,
                ledgers=ledgers[sl],
            )
        )
    return out


def _play(
    pols: list[CascadePolicy], env: Environment, T: int, R: int, streams: list[RepStreams], ck: np.ndarray,
    chunk: int, record: bool,
) -> tuple[RegretTally, tuple[Ledger, ...]]:  # fmt: skip
    """One agent for the P·R rows (row p·R + r: policy p on repetition r's streams), played
    chunk by chunk on each repetition's outcomes; its regret tally and the rows' ledgers."""
    P = len(pols)
    rows = [p for p in pols for _ in range(R)]
    run = RunContext(
        env.n_arms,
        T,
        env.structure,
        RepRandom([streams[r].policy for _ in pols for r in range(R)]),
        RepRandom([streams[r].privacy for _ in pols for r in range(R)]),
        RunLedgers(P * R),
    )
    agent = pols[0].agent_for_rows(run, rows, record=record)
    rngs = [np.random.Generator(np.random.PCG64(s.rewards)) for s in streams]
    tally = RegretTally(env, T, P * R, ck, record_actions=False)
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        base = np.stack([env.reward_chunk(r, t0, t1, rngs[r]) for r in range(R)])
        a = agent.run_chunk(t0, t1, Outcomes(_Tiled(base, P), pols[0].feedback))  # type: ignore[arg-type]
        tally.add(t0, t1, a, base, copies=P)
    agent.finish()
    return tally, tuple(run.ledgers)
