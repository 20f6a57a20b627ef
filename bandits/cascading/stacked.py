"""Many configurations of one cascade algorithm in one vectorised pass (seed 001's ε grids).

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
from bandits.engine.simulator import SimulationResult, chunk_rounds, log_checkpoints
from bandits.engine.streams import rep_streams, root_seed
from bandits.environments import Environment
from bandits.policy import Outcomes, RunContext
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

__all__ = ["simulate_stacked"]


class _Tiled:
    """The (P·R, C, N) outcome table of P stacked copies of R repetitions, built one round at a
    time (``table[:, i]``) instead of copying the chunk P times."""

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
    """One :class:`~bandits.engine.simulator.SimulationResult` per policy, identical to
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
    chunk = chunk_rounds(P * R, env.n_arms) if chunk_size is None else check_integer("chunk_size", chunk_size)
    means, opt, structure = env.means, env.optimum, env.structure
    n = P * R
    cum_gap, cum_rew = np.zeros(n), np.zeros(n)
    pseudo, emp = np.empty((n, ck.size)), np.empty((n, ck.size))
    pulls = np.zeros((n, env.n_arms), dtype=np.int64)
    ci = 0
    start = time.perf_counter()
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        base = np.stack([env.reward_chunk(r, t0, t1, rngs[r]) for r in range(R)])
        a = agent.run_chunk(t0, t1, Outcomes(_Tiled(base, P), pols[0].feedback))  # type: ignore[arg-type]
        gap = opt - structure.expected_reward(means, a)
        obs = structure.realised_reward(base[None], a.reshape((P, R) + a.shape[1:])).reshape(n, -1)
        g = np.cumsum(np.concatenate([cum_gap[:, None], gap], axis=1), axis=1)[:, 1:]
        w = np.cumsum(np.concatenate([cum_rew[:, None], obs], axis=1), axis=1)[:, 1:]
        cj = ci
        while cj < ck.size and ck[cj] <= t1:
            cj += 1
        if cj > ci:
            loc = ck[ci:cj] - t0 - 1
            pseudo[:, ci:cj] = g[:, loc]
            emp[:, ci:cj] = (opt * ck[ci:cj])[None, :] - w[:, loc]
            ci = cj
        cum_gap, cum_rew = g[:, -1].copy(), w[:, -1].copy()
        flat = (a.reshape(n, -1) + (np.arange(n) * env.n_arms)[:, None]).ravel()
        pulls += np.bincount(flat, minlength=n * env.n_arms).reshape(n, env.n_arms)
    agent.finish()
    elapsed = time.perf_counter() - start
    ledgers = tuple(run.ledgers)
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
                means=means,
                checkpoints=ck,
                pseudo_regret=pseudo[sl].copy(),
                empirical_regret=emp[sl].copy(),
                pulls=pulls[sl].copy(),
                elapsed=elapsed,
                ledgers=ledgers[sl],
            )
        )
    return out
