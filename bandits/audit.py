"""Empirical neighbour-distinguishing audit of Gaussian Thompson sampling (seed 004, Alg. 1–2).

The released output of Thompson sampling is the action sequence a_1..a_T; neighbouring reward
streams R, R′ differ in one reward r_τ. :func:`audit_thompson` samples trajectories of the *real*
policy implementation (:func:`bandits.simulator.simulate` with ``record_actions=True``) on two
fixed reward tables, computes a white-box and a black-box statistic of every trajectory, turns
them into valid lower bounds on the GDP μ and on ε at δ (:mod:`dpaudit.audit.thresholds`), and
compares them with the toolkit's certified μ (:attr:`dpaudit.thompson.ThompsonConfig.mu_tight`).

**Neighbours chosen to be hard to hide** (:class:`TSNeighbour`). Both tables are *fixed*
(:class:`~bandits.environments.RewardTableEnv`), so the only randomness is the policy's own
sampling and every trajectory is a draw from the output distribution M(R) of the mechanism.
Every column is constant — the leader (arm 0) always pays ``leader_reward`` (1), every other arm
``arm_reward`` (0) — except the changed entry: the reward r_τ of arm j at its *first* observation
(round τ = j·b, inside the deterministic pre-pull when b ≥ 1) is 1 under R and 0 under R′. So
the change is observed in every run, it leaks in all T − bN sampling rounds while arm j's count
is smallest (n_j = b), and arm j — a zero-reward arm — is rarely pulled again (each pull grows
n_j and shrinks the per-round loss 1/sqrt(c(n_j+1))). This is the worst case of the certified
count, up to the post-processing by the argmax. With b = 0 the first observation of any arm is
random, so the whole round-0 reward row changes (the *observed* r_0 differs whichever arm is
pulled). Constant columns also make the posterior a function of the pull counts only.

**White-box statistic** (:func:`trajectory_losses`): the exact privacy loss of the whole output

    L(a) = Σ_t log P(a_t | h_t, R) − log P(a_t | h_t, R′),

where P(a_t = i | h) = P(argmax_k θ_k = i), θ_k ~ N(μ̂_k, c/(n_k+1)) independent: for 2 arms
Φ((μ̂_i − μ̂_k)/sqrt(σ_i² + σ_k²)) (``scipy.special.log_ndtr``), for N arms a 1-D integral
computed by the toolkit's one Gaussian-argmax quadrature
(:func:`dpaudit.rnm_gaussian.log_argmax_probability`, via :func:`log_action_probabilities`).
By Neyman–Pearson,
thresholding L is the most powerful test between M(R) and M(R′).

**Black-box statistic**: the number of sampling-round pulls of the arm that observed r_τ.

**Bounds**: Clopper–Pearson on threshold tests over a pre-registered Bonferroni grid (valid for
*any* statistic, even if the white-box model were wrong), and the Monte-Carlo privacy profile
δ̂(ε) = E_R[(1 − e^{ε−L})₊] with a DKW band (valid only if L is the true privacy loss, i.e. if the
model matches the implementation; ``details["likelihood_ratio_check"]`` tests E_R[e^{−L}] = 1).

Example (tiny scale; the benchmark runs T = 1000 and 10^5 trajectories per neighbour):
    >>> from bandits import GaussianTS
    >>> rep = audit_thompson(GaussianTS(b=1, c=1.0), 40, 2, trials=2000, progress=False)
    >>> rep.verdict, rep.target
    ('consistent', 'thompson-sampling')
    >>> wb, bb = rep.details["white_box"]["mu_lower"], rep.details["black_box"]["mu_lower"]
    >>> 0 < bb < wb < rep.certified.mu
    True
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import special

from bandits.environments import RewardTableEnv
from bandits.gaussian_ts import GaussianTS
from bandits.simulator import simulate
from dpaudit.audit.profile import epsilon_lower_bound_from_losses, monte_carlo_profile
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.thresholds import Bonferroni, epsilon_lower_bound, mu_lower_bound
from dpaudit.conversions import gdp_epsilon
from dpaudit.rnm_gaussian import log_argmax_probability
from dpaudit.thompson import ThompsonConfig

__all__ = [
    "TSNeighbour",
    "NeighbourTables",
    "log_action_probabilities",
    "trajectory_losses",
    "black_box_statistic",
    "audit_thompson",
]

BATCH = 2048  # trajectories per task; fixed, so results do not depend on the executor


# ---------------------------------------------------------------------------------------
# neighbouring reward tables


@dataclass(frozen=True)
class NeighbourTables:
    """Two fixed (T, N) reward tables and where they differ.

    ``null`` is R (changed reward = ``values[0]``), ``alt`` is R′; ``tau`` is the changed round;
    ``observer`` the arm that observes it (None when b = 0: whichever arm is pulled at round 0);
    ``columns`` the constant reward of every arm outside round τ.
    """

    null: np.ndarray
    alt: np.ndarray
    tau: int
    observer: int | None
    columns: tuple[float, ...]
    values: tuple[float, float]
    first_private_round: int


@dataclass(frozen=True)
class TSNeighbour:
    """An adversarial neighbouring pair for Gaussian TS (see the module docstring).

    ``arm`` (j) holds the changed reward, observed at its first pre-pull (τ = j·b); ``values`` =
    (r_τ under R, r_τ under R′); arm ``leader`` pays ``leader_reward`` in every round, every other
    arm ``arm_reward``. With b = 0 the whole round-0 row is set to ``values``.

    >>> nb = TSNeighbour()
    >>> t = nb.tables(GaussianTS(b=2, c=1.0), 8, 2)
    >>> t.tau, t.observer, t.null[:, 1].tolist(), t.alt[:, 1].tolist()
    (2, 1, [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    """

    arm: int = 1
    values: tuple[float, float] = (1.0, 0.0)
    leader: int = 0
    leader_reward: float = 1.0
    arm_reward: float = 0.0

    def __post_init__(self) -> None:
        for name in ("arm", "leader"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.arm == self.leader:
            raise ValueError("arm (the changed arm) must differ from leader")
        vals = tuple(float(v) for v in self.values)
        if len(vals) != 2 or not all(0.0 <= v <= 1.0 for v in vals) or vals[0] == vals[1]:
            raise ValueError(f"values must be two different rewards in [0, 1], got {self.values!r}")
        object.__setattr__(self, "values", vals)
        for name in ("leader_reward", "arm_reward"):
            v = float(getattr(self, name))
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
            object.__setattr__(self, name, v)

    def tables(self, policy: GaussianTS, horizon: int, arms: int) -> NeighbourTables:
        """The two (T, N) tables for ``policy`` (its b decides τ)."""
        if max(self.arm, self.leader) >= arms:
            raise ValueError(f"arm and leader must be < arms = {arms}")
        b = policy.b
        cols = np.full(arms, self.arm_reward)
        cols[self.leader] = self.leader_reward
        null = np.tile(cols, (horizon, 1))
        alt = null.copy()
        if b >= 1:
            tau, observer = self.arm * b, self.arm
            null[tau, self.arm], alt[tau, self.arm] = self.values
            first = b * arms
        else:
            tau, observer = 0, None
            null[0, :], alt[0, :] = self.values
            first = 1
        if first >= horizon:
            raise ValueError(f"horizon {horizon} leaves no sampling round after the change")
        return NeighbourTables(null, alt, tau, observer, tuple(cols.tolist()), self.values, first)


# ---------------------------------------------------------------------------------------
# exact action probabilities


def _log_ndtr_pair(mu: np.ndarray, sig: np.ndarray, cand: np.ndarray) -> np.ndarray:
    other = 1 - cand
    rows = np.arange(mu.shape[0])
    d = mu[rows, cand] - mu[rows, other]
    return special.log_ndtr(d / np.hypot(sig[rows, cand], sig[rows, other]))


def log_action_probabilities(mu: np.ndarray, sigma: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """log P(argmax_k θ_k = actions[b]) for rows b, θ_k ~ N(mu[b, k], sigma[b, k]²) independent.

    Two arms: closed form log Φ((μ_i − μ_k)/sqrt(σ_i² + σ_k²)). More arms: the toolkit's one
    Gaussian-argmax quadrature, :func:`dpaudit.rnm_gaussian.log_argmax_probability` (vectorised
    over rows; error in log P ≤ ~1e-15 relative against 60-digit mpmath).

    >>> import numpy as np
    >>> mu, sg = np.array([[0.0, 0.5], [0.0, 0.5]]), np.full((2, 2), 2 ** -0.5)
    >>> np.exp(log_action_probabilities(mu, sg, np.array([0, 1]))).round(6).tolist()
    [0.308538, 0.691462]
    >>> mu3, sg3 = np.array([[1.0, 0.0, -1.0]]), np.array([[1.0, 0.5, 2.0]])
    >>> float(np.exp(log_action_probabilities(mu3, sg3, np.array([0])))[0]).__round__(4)
    0.6969
    """
    mu = np.asarray(mu, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    actions = np.asarray(actions, dtype=np.intp)
    if mu.ndim != 2 or mu.shape != sigma.shape or actions.shape != (mu.shape[0],):
        raise ValueError("mu and sigma must have shape (B, N) and actions shape (B,)")
    if mu.shape[1] == 2:
        return _log_ndtr_pair(mu, sigma, actions)
    return log_argmax_probability(mu, sigma, actions)


# ---------------------------------------------------------------------------------------
# per-trajectory statistics


def _posterior(counts: np.ndarray, hold: np.ndarray, columns: np.ndarray, value: float, c: float
               ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """μ̂ and σ from pull counts (constant columns; arm ``hold`` observed ``value`` once)."""
    S = counts * columns
    S += hold * (value - columns)
    n1 = counts + 1.0
    return S / n1, np.sqrt(c / n1)


def trajectory_losses(actions: np.ndarray, tables: NeighbourTables, c: float) -> np.ndarray:
    """Exact privacy loss L = log P(a | R) − log P(a | R′) of each action sequence (rows).

    The posterior before round t follows from the pull counts (constant columns), with the arm
    that observed r_τ holding ``values[0]`` (R) or ``values[1]`` (R′). Pre-pull rounds and
    rounds up to τ are identical under both tables and contribute 0. For N > 2 arms the
    (state, action) pairs are canonicalised (exchangeable arms' counts sorted) and de-duplicated
    before the quadrature (:func:`audit_thompson` de-duplicates across all its batches).

    >>> import numpy as np
    >>> from bandits import GaussianTS
    >>> t = TSNeighbour().tables(GaussianTS(b=1), 3, 2)
    >>> L = trajectory_losses(np.array([[0, 1, 0], [0, 1, 1]]), t, 1.0)
    >>> from scipy.stats import norm   # round 2: Φ(±(1/2 − 1/2)/1) vs Φ(±(0 − 1/2)/1)
    >>> np.allclose(L, [np.log(0.5 / norm.cdf(0.5)), np.log(0.5 / norm.cdf(-0.5))])
    True
    """
    a = np.asarray(actions).astype(np.intp)
    R, T = a.shape
    N = tables.null.shape[1]
    t0 = tables.first_private_round
    obs = np.full(R, tables.observer) if tables.observer is not None else a[:, tables.tau]
    cols = np.asarray(tables.columns)
    act = a[:, t0:]
    if N == 2:
        # state = (holder, t, n_1): a lookup table over the counts visited in each round, i.e. the
        # ragged grid n_1 ∈ [lo_t, hi_t] — its size follows the spread of the trajectories, not
        # T × max n_1 (a dense grid needs O(T²) memory once both arms are pulled often)
        n1 = (np.cumsum(a == 1, axis=1, dtype=np.int64) - (a == 1))[:, t0:]
        lo, hi = n1.min(axis=0), n1.max(axis=0)
        width = hi - lo + 1
        start = np.cumsum(width) - width
        K = int(width.sum())
        t_of = np.repeat(np.arange(t0, T), width)
        n_of = np.arange(K) - np.repeat(start, width) + np.repeat(lo, width)
        cnt = np.stack([t_of - n_of, n_of], axis=-1).astype(float)
        per_grid = np.zeros((2, K, 2))
        for h in np.unique(obs):  # the holder(s) of r_τ that occur (one when it is fixed)
            hold = np.zeros((K, 2))
            hold[:, h] = 1.0
            for act_ in range(2):
                lp = [log_action_probabilities(*_posterior(cnt, hold, cols, v, c), np.full(K, act_))
                      for v in tables.values]  # fmt: skip
                per_grid[h, :, act_] = lp[0] - lp[1]
        key = ((obs[:, None] * K + (start - lo)[None, :] + n1) * 2 + act)
        return per_grid.reshape(-1)[key].sum(axis=1)
    keys, inv = _batch_states(a, tables)
    return _state_losses(keys, tables, c)[inv].sum(axis=1)


# (state, action) pairs for N > 2 arms. With constant columns the posterior before round t is a
# function of (holder of r_τ, pull counts); the log-probability of the action taken is computed
# once per distinct canonical (holder, counts, action) — per batch, and in the audit once per
# distinct state over *all* batches — and scattered back to the rounds that visit it.

STATE_CHUNK = 8192  # distinct states per loss task (fixed: results do not depend on the executor)


def _packable(T: int, N: int) -> bool:
    return N * N * T**N < 2**62


def _pack(hold: np.ndarray, counts: np.ndarray, acts: np.ndarray, T: int) -> np.ndarray:
    """One exact key per (holder, counts, action) row: a mixed-radix int64 (counts < T) when it
    fits, else the raw int32 row as a fixed-size ``np.void`` (same equality, any N and T)."""
    N = counts.shape[1]
    if _packable(T, N):
        key = hold.astype(np.int64)
        for i in range(N):
            key = key * T + counts[:, i]
        return key * N + acts
    rows = np.column_stack([hold, counts, acts]).astype(np.int32)
    return np.ascontiguousarray(rows).view(np.dtype((np.void, 4 * (N + 2)))).ravel()


def _unpack(keys: np.ndarray, T: int, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if keys.dtype == np.int64:
        k = keys.copy()
        acts = k % N
        k //= N
        counts = np.empty((k.size, N), dtype=np.int64)
        for i in range(N - 1, -1, -1):
            counts[:, i] = k % T
            k //= T
        return k, counts, acts
    rows = np.ascontiguousarray(keys).view(np.int32).reshape(-1, N + 2).astype(np.int64)
    return rows[:, 0], rows[:, 1:-1], rows[:, -1]


def _canonicalise(hold: np.ndarray, counts: np.ndarray, acts: np.ndarray, columns: np.ndarray) -> None:
    """In place: sort the counts of exchangeable arms (same constant column, not the holder).

    Such arms with equal counts have equal posteriors, so permuting their counts permutes the
    argmax distribution; the action is moved to the first arm of the group holding its count.
    """
    N = counts.shape[1]
    for h in np.unique(hold):
        sel = np.flatnonzero(hold == h)
        for v in np.unique(columns):
            grp = np.flatnonzero((columns == v) & (np.arange(N) != h))
            if grp.size < 2:
                continue
            sub = counts[np.ix_(sel, grp)]
            srt = np.sort(sub, axis=1)
            a = acts[sel]
            mine = np.isin(a, grp)
            own = counts[sel, a]
            pos = (srt < own[:, None]).sum(axis=1)
            acts[sel] = np.where(mine, grp[np.minimum(pos, grp.size - 1)], a)
            counts[np.ix_(sel, grp)] = srt


def _batch_states(a: np.ndarray, tables: NeighbourTables) -> tuple[np.ndarray, np.ndarray]:
    """Distinct canonical (holder, counts, action) keys of the sampling rounds of ``a`` (R, T)
    and, per round, the index of its key: shape (R, T − first_private_round), int32."""
    R, T = a.shape
    N = tables.null.shape[1]
    t0 = tables.first_private_round
    obs = np.full(R, tables.observer) if tables.observer is not None else a[:, tables.tau]
    if _packable(T, N):  # the packed counts are a running sum of per-arm weights T^(N−1−i)
        inc = (T ** np.arange(N - 1, -1, -1, dtype=np.int64))[a]
        packed = np.cumsum(inc, axis=1)
        packed -= inc  # pulls before round t
        packed = packed[:, t0:]
        packed += (obs.astype(np.int64) * T**N)[:, None]
        packed *= N
        packed += a[:, t0:]
        raw, inv1 = np.unique(packed.reshape(-1), return_inverse=True)
        h, cn, ac = _unpack(raw, T, N)
    else:
        onehot = a[:, :, None] == np.arange(N, dtype=a.dtype)
        counts = np.cumsum(onehot, axis=1, dtype=np.int32)
        counts -= onehot  # pulls before round t
        cnt = counts[:, t0:].reshape(-1, N)
        acts = a[:, t0:].reshape(-1)
        hold = np.repeat(obs, T - t0)
        raw, first, inv1 = np.unique(_pack(hold, cnt, acts, T), return_index=True, return_inverse=True)
        h, cn, ac = hold[first], cnt[first].astype(np.int64), acts[first].astype(np.int64)
    _canonicalise(h, cn, ac, np.asarray(tables.columns))
    keys, inv2 = np.unique(_pack(h, cn, ac, T), return_inverse=True)
    return keys, inv2.reshape(-1)[inv1.reshape(-1)].astype(np.int32).reshape(R, T - t0)


def _state_losses(keys: np.ndarray, tables: NeighbourTables, c: float) -> np.ndarray:
    """log P(action | state, R) − log P(action | state, R′) for each packed state key."""
    T, N = tables.null.shape
    hold_arm, cnt, acts = _unpack(keys, T, N)
    hold = (np.arange(N)[None, :] == hold_arm[:, None]).astype(float)
    cf = cnt.astype(float)
    cols = np.asarray(tables.columns)
    lp = []
    for v in tables.values:
        mu, sg = _posterior(cf, hold, cols, v, c)
        lp.append(log_action_probabilities(mu, sg, acts))
    return lp[0] - lp[1]


def black_box_statistic(actions: np.ndarray, tables: NeighbourTables) -> np.ndarray:
    """Number of sampling-round pulls of the arm that observed r_τ (a function of the output).

    >>> import numpy as np
    >>> from bandits import GaussianTS
    >>> t = TSNeighbour().tables(GaussianTS(b=1), 5, 2)
    >>> black_box_statistic(np.array([[0, 1, 1, 0, 1]]), t).tolist()
    [2]
    """
    a = np.asarray(actions).astype(np.intp)
    obs = np.full(a.shape[0], tables.observer) if tables.observer is not None else a[:, tables.tau]
    return (a[:, tables.first_private_round :] == obs[:, None]).sum(axis=1)


def _batch(policy: GaussianTS, tables: NeighbourTables, horizon: int, side: int, root: Sequence[int],
           index: int, size: int, model_c: float) -> dict[str, np.ndarray]:  # fmt: skip
    """Sample ``size`` trajectories on table ``side`` (0: R, 1: R′) with the real policy code;
    return the black-box statistic and the white-box loss L (2 arms) or the batch's distinct
    states and per-round state indices (N > 2 arms, losses computed once per distinct state by
    :func:`audit_thompson`). Module-level: picklable for process executors."""
    seq = np.random.SeedSequence(root[0], spawn_key=tuple(root[1:]) + (side, index))
    env = RewardTableEnv(tables.null if side == 0 else tables.alt)
    res = simulate(_step_engine(policy), env, horizon, repetitions=size, seed=seq, record_actions=True,
                   checkpoints=1, progress=False, rep_chunk=size)  # fmt: skip
    assert res.actions is not None
    out = {"bb": black_box_statistic(res.actions, tables).astype(float)}
    if tables.null.shape[1] == 2:
        out["L"] = trajectory_losses(res.actions, tables, model_c)
    else:
        out["keys"], out["inv"] = _batch_states(res.actions, tables)
    jseq = np.random.SeedSequence(root[0], spawn_key=tuple(root[1:]) + (2, side, index))
    out["jitter"] = np.random.Generator(np.random.PCG64(jseq)).random((size, 2))
    return out


def _step_engine(policy: GaussianTS) -> GaussianTS:
    """The same policy with the plain step engine: bit-identical actions (``GaussianTS.engine``),
    and faster here — the audit's neighbours make the sampled arm switch too often for the
    speculative engine to pay off."""
    if getattr(policy, "engine", "step") == "speculative":
        return dataclasses.replace(policy, engine="step")
    return policy


# ---------------------------------------------------------------------------------------
# the audit


def _bounds(null: np.ndarray, alt: np.ndarray, delta: float, confidence: float) -> dict[str, Any]:
    sel = Bonferroni()
    mu = mu_lower_bound(null, alt, confidence=confidence, selection=sel)
    eps = epsilon_lower_bound(null, alt, delta=delta, confidence=confidence, selection=sel)
    return {"mu_lower": mu.mu, "epsilon_lower": eps.epsilon, "mu_bound": asdict(mu),
            "epsilon_bound": asdict(eps)}  # fmt: skip


def _run_tasks(fn: Any, args: list[tuple[Any, ...]], executor: Executor | None, progress: bool, desc: str,
               sizes: list[int], unit: str) -> list[Any]:  # fmt: skip
    """``[fn(*a) for a in args]``, on ``executor`` if given, with a progress bar."""
    from tqdm.auto import tqdm

    out = []
    with tqdm(total=sum(sizes), disable=not progress, desc=desc, unit=unit, leave=False) as bar:
        if executor is None:
            for a, n in zip(args, sizes):
                out.append(fn(*a))
                bar.update(n)
        else:
            futs = [executor.submit(fn, *a) for a in args]
            for f, n in zip(futs, sizes):
                out.append(f.result())
                bar.update(n)
    return out


def audit_thompson(
    policy: GaussianTS,
    horizon: int,
    arms: int,
    *,
    trials: int = 100_000,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
    neighbour: TSNeighbour | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    claim: ThompsonConfig | None = None,
) -> AuditReport:
    """Audit Gaussian Thompson sampling by distinguishing two neighbouring reward streams.

    Samples ``trials`` trajectories of ``policy`` under each of R and R′ (``neighbour``, default
    :class:`TSNeighbour()`), computes the white-box privacy loss L and the black-box pull count of
    each, and bounds μ and ε(δ) from below at ``confidence`` (Clopper–Pearson, Bonferroni over a
    pre-registered grid of 300 thresholds per orientation). The headline (``empirical``) is the
    white-box threshold bound; ``details`` hold the black-box bounds, the Monte-Carlo privacy
    profile (DKW band, both orders of the pair, confidence split between them), the paper's μ,
    the neighbour and timings. The certified claim is ``claim`` (default: the policy's own
    (b, c)), i.e. μ = ``claim.mu_tight`` and ε = gdp_epsilon(μ, δ).

    ``executor`` (any :class:`concurrent.futures.Executor`) runs batches of 2048 trajectories;
    batches are seeded by (seed, side, batch index), so results do not depend on it. A
    uniform jitter (1e-9 for L, 0.5 for the integer count) breaks ties: a randomised statistic,
    so every bound stays valid.
    """
    if not isinstance(policy, GaussianTS):
        raise ValueError(f"policy must be a GaussianTS, got {type(policy).__name__}")
    for name, v, low in (("horizon", horizon, 2), ("arms", arms, 2), ("trials", trials, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    horizon, arms, trials = int(horizon), int(arms), int(trials)
    nb = neighbour if neighbour is not None else TSNeighbour()
    tables = nb.tables(policy, horizon, arms)
    cfg = claim if claim is not None else ThompsonConfig(horizon, arms, policy.b, policy.c)
    start = time.perf_counter()
    root = (int(seed), 0x7A5D17)  # the audit's own spawn-key namespace
    jobs = [(side, i, min(BATCH, trials - i * BATCH)) for side in (0, 1) for i in range(-(-trials // BATCH))]
    args = [(policy, tables, horizon, side, root, i, n, policy.c) for side, i, n in jobs]

    parts = _run_tasks(_batch, args, executor, progress, "ts-audit", [a[-2] for a in args], "traj")
    sim_time = time.perf_counter() - start
    n_states = None
    if arms > 2:
        # one loss per distinct (holder, counts, action) state over all batches of both sides
        sizes = [p["keys"].size for p in parts]
        uniq, ginv = np.unique(np.concatenate([p.pop("keys") for p in parts]), return_inverse=True)
        ginv = ginv.reshape(-1)
        n_states = int(uniq.size)
        chunks = [(uniq[i : i + STATE_CHUNK], tables, policy.c) for i in range(0, uniq.size, STATE_CHUNK)]
        vals = _run_tasks(_state_losses, chunks, executor, progress, "ts-audit states",
                          [ch[0].size for ch in chunks], "state")  # fmt: skip
        per_state = np.concatenate(vals) if vals else np.empty(0)
        off = 0
        for p, n in zip(parts, sizes):
            p["L"] = per_state[ginv[off : off + n]][p.pop("inv")].sum(axis=1)
            off += n
    loss_time = time.perf_counter() - start - sim_time
    half = len(jobs) // 2
    cat = lambda k, s: np.concatenate([p[k] for p in (parts[:half] if s == 0 else parts[half:])])  # noqa: E731
    L0, L1 = cat("L", 0), cat("L", 1)
    J0, J1 = cat("jitter", 0), cat("jitter", 1)
    B0, B1 = cat("bb", 0), cat("bb", 1)

    white = _bounds(L0 + 1e-9 * J0[:, 0], L1 + 1e-9 * J1[:, 0], delta, confidence)
    black = _bounds(B0 + 0.5 * J0[:, 1], B1 + 0.5 * J1[:, 1], delta, confidence)
    # Monte-Carlo profile, both orders (L under R for (R, R'); −L under R' for (R', R))
    half_conf = 1.0 - (1.0 - confidence) / 2.0
    mc = [epsilon_lower_bound_from_losses(x, delta=delta, confidence=half_conf) for x in (L0, -L1)]
    eps_grid = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0]
    prof = monte_carlo_profile(L0, eps_grid, confidence=half_conf)
    mu_c = cfg.mu_tight
    eps_c = float(gdp_epsilon(mu_c, delta))
    with np.errstate(over="ignore"):
        lr_check = {"mean_exp_minus_L_under_R": float(np.mean(np.exp(-L0))),
                    "mean_exp_L_under_R_prime": float(np.mean(np.exp(L1))),
                    "expected": 1.0}  # fmt: skip
    details: dict[str, Any] = {
        "policy": policy.name, "horizon": horizon, "arms": arms, "b": policy.b, "c": policy.c,
        "claim": {"horizon": cfg.horizon, "arms": cfg.arms, "prepulls": cfg.prepulls,
                  "variance_scale": cfg.variance_scale},
        "mu_certified": mu_c, "mu_paper": cfg.mu_paper, "epsilon_certified": eps_c,
        "epsilon_paper": float(gdp_epsilon(cfg.mu_paper, delta)),
        "neighbour": {**asdict(nb), "tau": tables.tau, "observer": tables.observer,
                      "first_private_round": tables.first_private_round},
        "white_box": {**white, "statistic": "exact privacy loss L = log P(a|R) - log P(a|R')"},
        "black_box": {**black, "statistic": "pulls of the arm holding r_tau after the pre-pull"},
        "white_beats_black": white["mu_lower"] > black["mu_lower"],
        "monte_carlo_profile": {
            "epsilon_lower": max(b.epsilon for b in mc), "epsilon_lower_R_Rprime": mc[0].epsilon,
            "epsilon_lower_Rprime_R": mc[1].epsilon, "confidence_each": half_conf,
            "epsilons": list(prof.epsilons), "delta_estimate": list(prof.delta_estimate),
            "delta_lower": list(prof.delta_lower),
            "assumption": "L is the true privacy loss (white-box model == implementation)",
        },
        "loss_summary": {"mean_R": float(L0.mean()), "sd_R": float(L0.std()),
                         "mean_Rprime": float(L1.mean()), "sd_Rprime": float(L1.std()),
                         "mu_gaussian_fit": float(math.sqrt(max(0.0, L0.mean() - L1.mean())))},
        "likelihood_ratio_check": lr_check,
        "trials_per_neighbour": trials, "seconds": time.perf_counter() - start,
        "seconds_sampling_and_losses": sim_time + loss_time, "seconds_sampling": sim_time,
        "seconds_state_losses": loss_time, "distinct_states": n_states,
    }  # fmt: skip
    emp = Empirical(epsilon_lower=white["epsilon_lower"], mu_lower=white["mu_lower"], delta=delta,
                    confidence=confidence, trials=2 * trials,
                    method="clopper-pearson, bonferroni(grid_size=300)",
                    statistic="white-box privacy loss")  # fmt: skip
    cert = Certified(mu=mu_c, epsilon=eps_c, delta=delta, source="dpaudit")
    return AuditReport.build(target="thompson-sampling", certified=cert, empirical=emp, details=details)
