"""Trajectories of the Thompson-sampling audit and their statistics.

:func:`policy_actions` plays the *real* implementation (the policy's agent, exactly as
:func:`bandits.engine.simulator.simulate` plays it) on a fixed table; :func:`model_actions` an
independent plain simulation of the declared model. Per trajectory: the score statistic (the
first-order privacy loss), the changed arm's pulls, and on a subsample the exact privacy loss
(:func:`trajectory_losses`). Blocks of :data:`BATCH` trajectories are keyed by their seeds, so
results do not depend on the executor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from bandits.engine.memory import chunk_rounds
from bandits.engine.streams import StreamSeeds, rep_streams
from bandits.environments import RewardTableEnv
from bandits.policy import Outcomes, RunContext
from bandits.thompson.action_probabilities import (
    _SQRT_HALF,
    log_action_probabilities,
    neighbour_log_probabilities,
)
from bandits.thompson.audit_designs import NeighbourTables
from bandits.thompson.policy import GaussianTS
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.ledger import RunLedgers
from dpaudit.numerics import special
from dpaudit.tasks import run_tasks
from mechanisms.randomness import RepRandom, ScaledRandom

__all__ = [
    "BATCH",
    "sample_stage",
    "policy_actions",
    "model_actions",
    "score_statistic",
    "black_box_statistic",
    "trajectory_losses",
    "draws_loss",
]


BATCH = 8192
"""Trajectories per block (fixed, so results do not depend on the executor)."""

_NS = 0x7A5D17  # the audit's own spawn-key namespace


def _start_counts(first: np.ndarray, tables: NeighbourTables, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Pull counts of every arm before the first private round, and the holder of r_τ."""
    N = tables.null.shape[1]
    R = first.shape[0]
    if tables.observer is not None:
        return np.full((R, N), float(b)), np.full(R, tables.observer, dtype=np.intp)
    hold = first.astype(np.intp)
    cnt = np.zeros((R, N))
    cnt[np.arange(R), hold] = 1.0
    return cnt, hold


def policy_actions(policy: GaussianTS, table: np.ndarray, horizon: int, size: int,
                   seed: np.random.SeedSequence, watch: int | None = None, noise_factor: float = 1.0
                   ) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Play the policy's own agent for ``size`` repetitions on the fixed ``table`` exactly as
    :func:`bandits.engine.simulator.simulate` does (same per-repetition streams of ``seed``, same
    chunks of rounds, tested bit-identical) and return (actions of round 0, actions of the rounds
    from ``b·N`` (b ≥ 1) or 1 (b = 0) on, int8). No regret bookkeeping.

    With ``watch`` (an arm, or −1 for the arm each repetition played in round 0) it also returns
    the agent's own posterior draws θ of that arm in the same rounds, (size, rounds) — what the
    agent computed, read from it (:attr:`bandits.thompson.agent.GaussianTSAgent.watch`); with b = 0
    round 0 is then played as a chunk of its own (the noise stream does not depend on chunks).
    ``noise_factor`` scales every posterior noise draw (the measured floor's variants; 1: the
    policy as it is)."""
    N = table.shape[1]
    # repetition r's policy stream, as bandits.engine.streams.rep_streams(seed, r).policy (the privacy
    # stream is not used by Gaussian TS: the same generators stand in for it)
    random = RepRandom.deferred(size, StreamSeeds(tuple(rep_streams(seed, r) for r in range(size)), "policy"))
    if noise_factor != 1.0:
        random = ScaledRandom.scaling(random, noise_factor)
    # the audit reads only the actions (a run's releases are checked by dpaudit run's ledger check)
    run = RunContext(N, horizon, RewardTableEnv(table[:1]).structure, random, random,
                     RunLedgers(size, recording=False))  # fmt: skip
    agent = _step_engine(policy).agent(run)
    first = max(policy.b * N, 1) if policy.b else 1
    out = np.empty((size, horizon - first), dtype=np.int8)
    drawn = np.empty((size, horizon - first)) if watch is not None else None
    a0 = np.zeros(size, dtype=np.int8)
    chunk = chunk_rounds(size, N)
    bounds = list(range(0, horizon, chunk)) + [horizon]
    if watch is not None and watch < 0 and horizon > 1 and bounds[1] > 1:
        bounds.insert(1, 1)  # round 0 alone: its action names the watched arm
    if watch is not None and watch >= 0:
        agent.watch = np.full(size, watch, dtype=np.intp)
    for t0, t1 in zip(bounds, bounds[1:]):
        tab = np.broadcast_to(table[t0:t1], (size, t1 - t0, N))
        act = agent.run_chunk(t0, t1, Outcomes(tab, policy.feedback))
        if t0 == 0:
            a0[:] = act[:, 0]
            if watch is not None and watch < 0:
                agent.watch = act[:, 0].astype(np.intp)
        lo = max(t0, first)
        if lo < t1:
            out[:, lo - first : t1 - first] = act[:, lo - t0 :]
            if drawn is not None:
                drawn[:, lo - first : t1 - first] = agent.drawn[:, lo - t0 :]
    agent.finish()
    return (a0, out) if drawn is None else (a0, out, drawn)


def _step_engine(policy: GaussianTS) -> GaussianTS:
    """The same policy with the ``"kernel"`` engine: bit-identical actions (``GaussianTS.engine``);
    faster here, where tied arms make the speculative engine's guesses fail (vectorised pre-pulls,
    then the compiled per-repetition round loop, or the NumPy step loop without numba)."""
    if getattr(policy, "engine", "kernel") != "kernel":
        return dataclasses.replace(policy, engine="kernel")
    return policy


def model_actions(config: ThompsonConfig, table: np.ndarray, size: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The model: Algorithm 2 of Ou, Avella Medina & Cummings (2024) with the declared
    (T, N, b, c), simulated plainly from its definition, vectorised over ``size`` runs — pre-pull
    every arm b times, then θ_i ~ N(S_i/(n_i+1), c/(n_i+1)) and play argmax θ. Returns what
    :func:`policy_actions` returns.

    >>> import numpy as np
    >>> a0, a = model_actions(ThompsonConfig(6, 2, 1, 1.0), np.full((6, 2), 0.5), 3, np.random.default_rng(0))
    >>> a0.tolist(), a.shape
    ([0, 0, 0], (3, 4))
    """
    T, N, b, c = config.horizon, config.arms, config.prepulls, config.variance_scale
    S = np.zeros((size, N))
    n = np.zeros((size, N))
    rows = np.arange(size)
    first = b * N if b else 1
    out = np.empty((size, T - first), dtype=np.int8)
    a0 = np.zeros(size, dtype=np.int8)
    for i in range(N if b else 0):  # the pre-pull: arm i is played in rounds i·b .. (i+1)·b − 1
        S[:, i] = table[i * b : (i + 1) * b, i].sum()
        n[:, i] = b
    # the posterior means and widths, kept per arm and updated where a pull changed them (the same
    # values, bit for bit, as computing them afresh each round)
    mean, sd = S / (n + 1.0), np.sqrt(c / (n + 1.0))
    Sf, nf, mf, sf = S.reshape(-1), n.reshape(-1), mean.reshape(-1), sd.reshape(-1)
    theta = np.empty((size, N))
    for t in range(b * N, T):
        rng.standard_normal(out=theta)
        theta *= sd
        theta += mean
        a = np.argmax(theta, axis=1)
        at = rows * N + a
        s, m = Sf[at] + table[t, a], nf[at] + 1.0  # the pulled arms' sums and counts, read once
        Sf[at], nf[at] = s, m
        n1 = m + 1.0
        mf[at] = s / n1
        sf[at] = np.sqrt(c / n1)
        if t == 0:
            a0[:] = a
        if t >= first:
            out[:, t - first] = a
    return a0, out


_ROWS = 512
"""Rows per slice of the block statistics (bounded temporaries; results do not depend on it)."""


def _hits_and_counts(a: np.ndarray, hold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1{a_t = j} and the pulls of the holder j *before* each private round (integers, int32),
    shape (R, L) each."""
    hit = a == hold[:, None].astype(a.dtype)
    cnt = hit.astype(np.int32)
    np.cumsum(cnt, axis=1, out=cnt)  # in place, from int32 (not cast from bool on the way: 2× faster)
    cnt -= hit
    return hit, cnt


def _score_rows(hit: np.ndarray, cnt: np.ndarray, s0: np.ndarray, c: float, N: int) -> np.ndarray:
    """Σ_t (1{a_t = j} − 1/N) w_t, w_t = 1/sqrt(c(n_j(t) + 1)), n_j(t) = s0 + cnt (floats, as the
    per-round formula: the same values bit for bit), per row; w from a lookup of the L + 1
    possible counts when every row starts from the same count."""
    R, L = hit.shape
    out = np.empty(R)
    one = R > 0 and bool((s0 == s0[0]).all())
    if one:
        w_of = 1.0 / np.sqrt(c * ((np.arange(L + 1) + float(s0[0])) + 1.0))
    for s in range(0, R, _ROWS):
        h, k = hit[s : s + _ROWS], cnt[s : s + _ROWS]
        w = w_of.take(k) if one else 1.0 / np.sqrt(c * ((k + s0[s : s + _ROWS, None]) + 1.0))
        out[s : s + _ROWS] = ((h - 1.0 / N) * w).sum(axis=1)
    return out


def score_statistic(a: np.ndarray, hold: np.ndarray, start: np.ndarray, c: float) -> np.ndarray:
    """Σ_t (1{a_t = j} − 1/N)/sqrt(c(n_j(t) + 1)) over the private rounds (module docstring).

    >>> import numpy as np
    >>> s = score_statistic(np.array([[1, 0]]), np.array([1]), np.array([[1.0, 1.0]]), 1.0)
    >>> bool(np.isclose(s[0], 0.5 / np.sqrt(2) - 0.5 / np.sqrt(3)))
    True
    """
    hit, cnt = _hits_and_counts(a, hold)
    return _score_rows(hit, cnt, start[np.arange(a.shape[0]), hold], c, start.shape[1])


def black_box_statistic(actions: np.ndarray, tables: NeighbourTables) -> np.ndarray:
    """Number of private-round pulls of the arm that observed r_τ (from whole action rows).

    >>> import numpy as np
    >>> from bandits.thompson.audit_designs import TSNeighbour
    >>> t = TSNeighbour().tables(GaussianTS(b=1), 5, 2)
    >>> black_box_statistic(np.array([[0, 1, 1, 0, 1]]), t).tolist()
    [2]
    """
    a = np.asarray(actions).astype(np.intp)
    obs = np.full(a.shape[0], tables.observer) if tables.observer is not None else a[:, tables.tau]
    return (a[:, tables.first_private_round :] == obs[:, None]).sum(axis=1)


def _round_states(a: np.ndarray, hold: np.ndarray, start: np.ndarray, tables: NeighbourTables, c: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per private round of every row: posterior means under R and R′, σ, action, holder."""
    R, L = a.shape
    N = start.shape[1]
    onehot = a[:, :, None] == np.arange(N, dtype=a.dtype)
    cnt = np.cumsum(onehot, axis=1, dtype=np.float64)
    cnt -= onehot
    cnt += start[:, None, :]
    cnt = cnt.reshape(-1, N)
    cols = np.asarray(tables.columns)
    hold_r = np.repeat(hold, L)
    n1 = cnt + 1.0
    S = cnt * cols
    r = np.arange(cnt.shape[0])
    base = S[r, hold_r] - cols[hold_r]
    mus = []
    for v in tables.values:
        S[r, hold_r] = base + v
        mus.append(S / n1)
    return mus[0], mus[1], np.sqrt(c / n1), a.reshape(-1).astype(np.intp), hold_r


def trajectory_losses(actions: np.ndarray, tables: NeighbourTables, c: float) -> np.ndarray:
    """Exact privacy loss L = log P(a | R) − log P(a | R′) of whole action rows (shape (R, T)).

    The posterior before round t follows from the pull counts (constant columns), with the arm
    that observed r_τ holding ``values[0]`` (R) or ``values[1]`` (R′); pre-pull rounds and
    rounds up to τ are identical under both tables and contribute 0. Uses
    :func:`log_action_probabilities` (the exact quadrature for N > 2).

    >>> import numpy as np
    >>> from bandits.thompson.audit_designs import TSNeighbour
    >>> t = TSNeighbour(leader_reward=1.0, arm_reward=0.0).tables(GaussianTS(b=1), 3, 2)
    >>> L = trajectory_losses(np.array([[0, 1, 0], [0, 1, 1]]), t, 1.0)
    >>> from scipy.stats import norm   # round 2: Φ(±(1/2 − 1/2)/1) vs Φ(±(0 − 1/2)/1)
    >>> np.allclose(L, [np.log(0.5 / norm.cdf(0.5)), np.log(0.5 / norm.cdf(-0.5))])
    True
    """
    a = np.asarray(actions).astype(np.intp)
    t0 = tables.first_private_round
    b = t0 // tables.null.shape[1] if tables.observer is not None else 0
    start, hold = _start_counts(a[:, 0], tables, b)
    m0, m1, sg, act, _ = _round_states(a[:, t0:], hold, start, tables, c)
    lp = log_action_probabilities(m0, sg, act) - log_action_probabilities(m1, sg, act)
    return lp.reshape(a.shape[0], -1).sum(axis=1)


def _pair_terms(cols: np.ndarray, values: tuple[float, float], c: float, h: int, sj: float, so: float,
                k: np.ndarray, m: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The per-round terms of the 2-arm exact loss at states (round k, holder's count m before the
    round): L_t = log P(a_t | R) − log P(a_t | R′) interleaved as [miss, hit] (shape (2·len(k),)),
    and P(a_t = j) under the side's table. The holder j = ``h`` starts from ``sj`` pulls, the
    other arm from ``so``; the arithmetic is the closed form's, operation for operation:
    P(a_t = j | h_t) = Φ((μ_j − μ_o)/sqrt(σ_j² + σ_o²)) with μ, σ from the counts (constant
    columns)."""
    cj, co = cols[h], cols[1 - h]
    nj = m.astype(np.float64)
    no = (k - nj) + so
    nj += sj
    inv_j, inv_o = 1.0 / (nj + 1.0), 1.0 / (no + 1.0)
    scale = np.sqrt(c * (inv_j + inv_o))
    base = (cj * nj - cj) * inv_j - co * no * inv_o  # μ_j − μ_o without the changed reward
    lp_miss, lp_hit = [], []
    for v in values:
        x = (base + v * inv_j) / scale
        lp_miss.append(np.log(0.5 * special().erfc(x * _SQRT_HALF)))
        lp_hit.append(np.log(0.5 * special().erfc(-x * _SQRT_HALF)))
        if v == values[side]:
            pj = 0.5 * special().erfc(-x * _SQRT_HALF)
    D = np.empty(2 * k.size)
    D[0::2] = lp_miss[0] - lp_miss[1]
    D[1::2] = lp_hit[0] - lp_hit[1]
    return D, pj


def _exact_two(hit: np.ndarray, cnt: np.ndarray, hold: np.ndarray, start: np.ndarray, tables: NeighbourTables,
               c: float, side: int) -> dict[str, Any]:  # fmt: skip
    """:func:`_exact_block` for N = 2 from the hits and the holder's counts (R, L).

    The state before round k of a row is fixed by (k, the holder's count m): the per-round terms
    (:func:`_pair_terms`) are computed once per state the block visits (for each k, the band
    between the smallest and the largest m of the rows with the same start) and gathered per
    round, then summed per row exactly as the per-round formula was (same values, same order:
    identical results, tested against the former per-round computation)."""
    cols = np.asarray(tables.columns)
    R, L = hit.shape
    rows = np.arange(R)
    keys = np.stack([hold.astype(np.float64), start[rows, hold], start[rows, 1 - hold]], axis=1)
    groups, g_of = np.unique(keys, axis=0, return_inverse=True)
    g_of = g_of.reshape(-1)
    k_all = np.arange(L)
    D_parts, P_parts, offset, base = [], [], np.empty((len(groups), L), dtype=np.int64), 0
    for g, (h, sj, so) in enumerate(groups):
        sel = cnt[g_of == g] if len(groups) > 1 else cnt
        lo, hi = sel.min(axis=0).astype(np.int64), sel.max(axis=0).astype(np.int64)
        width = hi - lo + 1
        first = np.cumsum(width) - width  # the band of round k starts here
        k = np.repeat(k_all, width)
        m = np.arange(k.size) - np.repeat(first, width) + np.repeat(lo, width)
        D, P = _pair_terms(cols, tables.values, c, int(h), sj, so, k.astype(np.float64), m, side)
        D_parts.append(D)
        P_parts.append(P)
        offset[g] = base + first - lo  # state (k, m) of group g is entry offset[g, k] + m
        base += k.size
    D, P = np.concatenate(D_parts), np.concatenate(P_parts)
    Ls, gs, gv = np.empty(R), 0.0, 0.0
    for s0 in range(0, R, _ROWS):
        h, n = hit[s0 : s0 + _ROWS], cnt[s0 : s0 + _ROWS]
        idx = offset[g_of[s0 : s0 + _ROWS]] + n
        Ls[s0 : s0 + _ROWS] = D.take(2 * idx + h).sum(axis=1)
        pj = P.take(idx)
        gs += float(np.sum(h - pj))
        gv += float(np.sum(pj * (1.0 - pj)))
    return {"L": Ls, "gof_sum": gs, "gof_var": gv, "rule": {"rule": "closed form (2 arms)"}}


def _exact_block(a: np.ndarray, hold: np.ndarray, start: np.ndarray, tables: NeighbourTables, c: float,
                 side: int, check: np.random.Generator) -> dict[str, Any]:  # fmt: skip
    """Exact loss per row, and the goodness-of-fit sums of the changed arm's probability under
    the side's own table (Σ (1{a = j} − p_j), Σ p_j(1 − p_j)); rows in chunks of 128."""
    if start.shape[1] == 2:
        hit, cnt = _hits_and_counts(a, hold)
        return _exact_two(hit, cnt, hold, start, tables, c, side)
    Ls, gs, gv, infos = [], 0.0, 0.0, []
    for s0 in range(0, a.shape[0], 128):
        m0, m1, sg, act, hold_r = _round_states(a[s0 : s0 + 128], hold[s0 : s0 + 128], start[s0 : s0 + 128],
                                                tables, c)  # fmt: skip
        probe = check if s0 == 0 else None
        lp0, lp1, lph, info = neighbour_log_probabilities(m0, m1, sg, act, hold_r, side, probe)
        infos.append(info)
        Ls.append((lp0 - lp1).reshape(-1, a.shape[1]).sum(axis=1))
        pj = np.exp(lph)
        hit = (act == hold_r).astype(float)
        gs += float(np.sum(hit - pj))
        gv += float(np.sum(pj * (1.0 - pj)))
    worst = max(infos, key=lambda i: i.get("max_abs_error_log_p", 0.0))
    return {"L": np.concatenate(Ls), "gof_sum": gs, "gof_var": gv, "rule": worst}


def draws_loss(drawn: np.ndarray, cnt: np.ndarray, s0: np.ndarray, c_hold: np.ndarray,
               values: tuple[float, float], c: float, rounds: int | None = None) -> np.ndarray:  # fmt: skip
    """Exact privacy loss of the changed arm j's posterior draws, per row: the log-likelihood ratio
    of the transcript (θ_j,t) under R vs R′ of the declared mechanism θ_j,t ~ N(μ_j,t, c/(n + 1)).

    Given the past, only arm j's mean differs: μ_j = (n·c_j − c_j + v)/(n + 1) with n = s0 + cnt
    its pulls before the round, c_j its constant reward and v = ``values[0]`` (R) or ``values[1]``
    (R′) the changed one; the other arms' draws have the same law under both. So
    L = Σ_t (μ⁰ − μ¹)(2θ − μ⁰ − μ¹)/(2σ²) = ((v₀ − v₁)/(2c)) Σ_t (2θ_t − μ⁰_t − μ¹_t).
    ``rounds`` keeps the first rounds only (1: the loss of the first draw alone).

    >>> import numpy as np
    >>> # pulls n = 1, 2: means under R (1/2, 1/2) and R′ (0, 1/6); a draw at R's mean each time
    >>> L = draws_loss(np.array([[0.5, 0.5]]), np.array([[0, 1]]), np.array([1.0]), np.array([0.5]),
    ...                (1.0, 0.0), 1.0)
    >>> round(float(L[0]), 6)  # ½·((1 − ½) + (1 − ⅔)) = Σ (μ⁰ − μ¹)²/(2σ²) with σ² = 1/(n + 1)
    0.416667
    """
    v0, v1 = values
    if rounds is not None:
        drawn, cnt = drawn[:, :rounds], cnt[:, :rounds]
    out = np.empty(drawn.shape[0])
    for s in range(0, drawn.shape[0], _ROWS):
        n = cnt[s : s + _ROWS] + s0[s : s + _ROWS, None]
        cj = c_hold[s : s + _ROWS, None]
        base = n * cj - cj
        mid = (2.0 * base + (v0 + v1)) / (n + 1.0)
        out[s : s + _ROWS] = (2.0 * drawn[s : s + _ROWS] - mid).sum(axis=1)
    return out * ((v0 - v1) / (2.0 * c))


def _block_stats(a0: np.ndarray, a: np.ndarray, tables: NeighbourTables, b: int, c: float,
                 exact_rows: int, side: int, check_seed: Sequence[int],
                 drawn: np.ndarray | None = None) -> dict[str, Any]:  # fmt: skip
    """Score, pull count, (N = 2: every row; else the first ``exact_rows``) exact losses and, with
    the changed arm's ``drawn`` posterior draws, their exact loss (:func:`draws_loss`)."""
    start, hold = _start_counts(a0, tables, b)
    N = start.shape[1]
    hit, cnt = _hits_and_counts(a, hold)
    rows = np.arange(a.shape[0])
    out: dict[str, Any] = {
        "score": _score_rows(hit, cnt, start[rows, hold], c, N),
        "pulls": hit.sum(axis=1).astype(float),
    }
    if drawn is not None:
        cols = np.asarray(tables.columns, dtype=float)
        s0, c_hold = start[rows, hold], cols[hold]
        out["draws"] = draws_loss(drawn, cnt, s0, c_hold, tables.values, c)
        out["draws_first"] = draws_loss(drawn, cnt, s0, c_hold, tables.values, c, rounds=1)
    if N == 2 and a.shape[0]:
        out["exact"] = _exact_two(hit, cnt, hold, start, tables, c, side)
    elif min(exact_rows, a.shape[0]):
        k = min(exact_rows, a.shape[0])
        rng = np.random.default_rng(np.random.SeedSequence(check_seed[0], spawn_key=tuple(check_seed[1:])))
        out["exact"] = _exact_block(a[:k], hold[:k], start[:k], tables, c, side, rng)
    return out


def _policy_block(policy: GaussianTS, tables: NeighbourTables, horizon: int, side: int, key: tuple[int, ...],
                  seed: int, size: int, exact_rows: int, c_model: float,
                  draws: bool = False, noise_factor: float = 1.0) -> dict[str, Any]:  # fmt: skip
    """One block of the real implementation (module-level: picklable for process executors); with
    ``draws``, the changed arm's posterior draws are read from the agent and scored too (under the
    declared mechanism, scale ``c_model``); ``noise_factor`` scales the agent's posterior noise."""
    seq = np.random.SeedSequence(seed, spawn_key=(_NS,) + key)
    tab = tables.null if side == 0 else tables.alt
    if not draws:
        a0, a = policy_actions(policy, tab, horizon, size, seq, noise_factor=noise_factor)
        return _block_stats(a0, a, tables, policy.b, c_model, exact_rows, side, (seed, _NS, 9) + key)
    watch = tables.observer if tables.observer is not None else -1
    a0, a, drawn = policy_actions(policy, tab, horizon, size, seq, watch=watch, noise_factor=noise_factor)
    return _block_stats(a0, a, tables, policy.b, c_model, exact_rows, side, (seed, _NS, 9) + key, drawn)


def _model_block(config: ThompsonConfig, tables: NeighbourTables, side: int, key: tuple[int, ...],
                 seed: int, size: int) -> dict[str, Any]:  # fmt: skip
    """One block of the model."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_NS,) + key))
    a0, a = model_actions(config, tables.null if side == 0 else tables.alt, size, rng)
    return _block_stats(a0, a, tables, config.prepulls, config.variance_scale, 0, side, (seed, _NS, 9) + key)


def sample_stage(fn: Any, head: tuple[Any, ...], tail: tuple[Any, ...], stage: int, design: int, n: int,
                 seed: int, executor: Executor | None, progress: bool,
                 desc: str) -> list[dict[str, Any]]:  # fmt: skip
    """Both sides of one stage of the audit: ``n`` trajectories per side of ``fn(*head, side, key,
    seed, size, *tail)`` in blocks keyed by (stage, design, side, block), merged per side."""
    args, sizes = [], []
    for side in (0, 1):
        for i, sz in enumerate(_blocks(n)):
            # tail[0], if given, is the number of leading trajectories (over all blocks) with
            # the exact loss: block i gets its share of them
            t = (max(0, min(sz, tail[0] - i * BATCH)),) + tail[1:] if tail else tail
            args.append(head + (side, (stage, design, side, i), seed, sz) + t)
            sizes.append(sz)
    parts = run_tasks(fn, args, executor=executor, progress=progress, desc=desc, unit="traj", sizes=sizes)
    k = len(_blocks(n))
    return [_merge(parts[:k]), _merge(parts[k:])]


def _blocks(n: int) -> list[int]:
    return [BATCH] * (n // BATCH) + ([n % BATCH] if n % BATCH else [])


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [k for k in ("score", "pulls", "draws", "draws_first") if k in parts[0]]
    out: dict[str, Any] = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    ex = [p["exact"] for p in parts if "exact" in p]
    if ex:
        out["L"] = np.concatenate([e["L"] for e in ex])
        out["gof_sum"] = sum(e["gof_sum"] for e in ex)
        out["gof_var"] = sum(e["gof_var"] for e in ex)
        out["rule"] = ex[0]["rule"] | {
            "max_abs_error_log_p": max(e["rule"].get("max_abs_error_log_p", 0.0) for e in ex)
        }
    return out
