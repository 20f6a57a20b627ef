"""A plain per-step loop of the cascading bandits of Wang et al. (2021), one repetition at a time.

The reference the vectorised agents (:mod:`bandits.cascading.base` and the variant modules) are
tested against and the baseline of ``benchmarks/bench_cascade.py``: every round recomputes every
item's index straight from the paper's formulas (``ŵ + sqrt(1.5 log t / T) + ...``, no cached
parts), sorts the items, walks down the list to the first attractive one and updates the examined
items — no vectorisation across repetitions. It draws the same random numbers as
:func:`bandits.engine.simulator.simulate` (the repetition's outcome table, tie keys and noise
streams), so the actions agree. Algorithm 1's counters are one
:class:`~mechanisms.continual.hybrid_batch.BatchHybridStreams` of one row (itself tested against
:class:`mechanisms.continual.hybrid.HybridCounter`).

Example:
    >>> import numpy as np
    >>> from bandits.environments.cascade import cascade_instance
    >>> from bandits.cascading.policies import CascadeLDP
    >>> from bandits.engine.simulator import simulate
    >>> env, pol = cascade_instance(8, 2), CascadeLDP(1.0, "gaussian", noise_factor=0.01)
    >>> ref = reference_actions(pol, env, 200, seed=3, rep=1)
    >>> sim = simulate(pol, env, 200, 2, 3, record_actions=True, progress=False)
    >>> bool((sim.actions[1] == ref).all())
    True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandits.cascading.policies import (
    CascadeDP,
    CascadeDPCounts,
    CascadeLDP,
    CascadeLDPFixed,
    CascadePolicy,
    CascadeUCB1,
    counts_sensitivity,
)
from bandits.engine.streams import rep_streams
from bandits.engine.tables import reward_table
from bandits.environments import Environment
from mechanisms.continual.hybrid_batch import BatchHybridStreams, BatchHybridSums, hybrid_error_sum_b2
from mechanisms.randomness import RepRandom

__all__ = ["reference_actions"]


def _order(u: np.ndarray, k: int, keys: np.ndarray | None) -> np.ndarray:
    if keys is None:
        return np.argsort(-u, kind="stable")[:k]
    return np.lexsort((keys, -u))[:k]


def reference_actions(
    policy: CascadePolicy, env: Environment, horizon: int, seed: int = 0, rep: int = 0
) -> np.ndarray:
    """The (T, K) lists ``policy`` plays in repetition ``rep`` of ``simulate(..., seed)``."""
    if not isinstance(policy, (CascadeUCB1, CascadeLDP, CascadeLDPFixed, CascadeDP, CascadeDPCounts)):
        raise ValueError(f"policy must be a cascade policy of bandits.cascading, got {type(policy).__name__}")
    T = int(horizon)
    L, K = env.n_arms, env.structure.k  # type: ignore[attr-defined]
    table = reward_table(env, T, seed, rep)
    st = rep_streams(seed, rep)
    keys = RepRandom([st.policy]).child(0).random((T, L))[0] if policy.ties == "random" else None
    noise = RepRandom([st.privacy]).child(0)
    gaussian = getattr(policy, "noise", "laplace") == "gaussian"
    width = 2 * L if isinstance(policy, CascadeDPCounts) else K
    z = (noise.standard_normal if gaussian else noise.laplace)((T, width))[0]
    S, N = np.zeros(L), np.zeros(L)  # sums and counts (observations, or noisy examinations)
    D, P, w0 = np.zeros(L), np.zeros(L), np.zeros(L)
    paper = policy.init == "paper"
    mech: BatchHybridStreams | BatchHybridSums | None = None
    if isinstance(policy, CascadeDP):
        mech = BatchHybridStreams(
            1,
            L,
            epsilon=np.array([policy.counter_epsilon(L)]),
            noise_factor=np.array([policy.noise_factor]),
            levels=max(2, T.bit_length()),
        )
    elif isinstance(policy, CascadeDPCounts):
        mech = BatchHybridSums(
            1,
            2 * L,
            epsilon=np.array([policy.epsilon]),
            sensitivity=counts_sensitivity(K),
            noise_factor=np.array([policy.noise_factor]),
            levels=max(2, T.bit_length()),
        )
    out = np.empty((T, K), dtype=np.int64)
    for s in range(T):
        kk = None if keys is None else keys[s]
        if s == 0 and paper:  # "Observe w_0": a data-independent list, the raw vector w_0
            out[s] = _order(np.zeros(L), K, kk)
            w0 = (table[0] >= 0.5).astype(float)
            S, N = w0.copy(), np.ones(L)
            continue
        t = s + (0 if paper else 1)
        lt = math.log(t)
        u = _index(policy, K, L, T, t, lt, S, N, D, P, w0, mech)
        a = _order(u, K, kk)
        out[s] = a
        hit = np.flatnonzero(table[s, a] >= 0.5)
        click = int(hit[0]) if hit.size else K
        _update(policy, K, L, s, a, click, z[s], S, N, D, P, mech)
    return out


def _index(
    policy: CascadePolicy, K: int, L: int, T: int, t: int, lt: float, S: np.ndarray, N: np.ndarray,
    D: np.ndarray, P: np.ndarray, w0: np.ndarray | None, mech: Any,
) -> np.ndarray:  # fmt: skip
    if isinstance(policy, (CascadeUCB1, CascadeLDP)):
        n = np.maximum(N, 1.0)
        u = S / n + np.sqrt(1.5 * lt / n)
        if isinstance(policy, CascadeLDP):
            b = policy.bonus_scale(K)
            if policy.noise == "laplace":  # Alg. 2 line 5
                u = u + b * np.sqrt(24.0 * lt / n)
            else:  # Alg. 3 line 5
                u = u + b * np.sqrt(2.0 * math.log(2.0 * t**3) / n)
        return np.where(N > 0, u, np.inf)
    if isinstance(policy, CascadeLDPFixed):
        e = np.maximum(N, 1.0)
        b = policy.bonus_scale(K)
        dev = b * (
            np.sqrt(24.0 * P * lt) if policy.noise == "laplace" else np.sqrt(2.0 * P * math.log(2.0 * t**3))
        )
        return np.where(D > 0, S / e + np.sqrt(1.5 * lt / e) + dev / e, np.inf)
    if isinstance(policy, CascadeDP):  # Alg. 1 line 5 with ŵ = (w_0 + S̃)/T
        n = np.maximum(N, 1.0)
        coef = policy.bonus_coefficient(L, T)
        u = (w0 + mech.out[0]) / n + np.sqrt(1.5 * lt / n) + coef * lt / n
        return np.where(N > 0, u, np.inf)
    assert isinstance(policy, CascadeDPCounts)
    out = mech.out[0]
    n = np.maximum(out[L:], 1.0)
    mult = 1.0 if policy.factor_on == "noise-and-bonus" else 1.0 / policy.noise_factor
    lam = mult * math.sqrt(24.0 * lt * float(hybrid_error_sum_b2(mech.t, mech.log_scale())[0]))
    return np.where(D > 0, out[:L] / n + np.sqrt(1.5 * lt / n) + 2.0 * lam / n, np.inf)


def _update(
    policy: CascadePolicy, K: int, L: int, s: int, a: np.ndarray, click: int, z: np.ndarray, S: np.ndarray,
    N: np.ndarray, D: np.ndarray, P: np.ndarray, mech: Any,
) -> None:  # fmt: skip
    examined = range(min(click + 1, K))
    if isinstance(policy, CascadeUCB1):
        for k in examined:
            N[a[k]] += 1.0
            S[a[k]] += 1.0 if k == click else 0.0
    elif isinstance(policy, CascadeLDP):  # ŵ ← (T ŵ + 1{C = k} + noise)/(T + 1)
        scale = policy.value_scale(K)
        for k in examined:
            N[a[k]] += 1.0
            S[a[k]] += (1.0 if k == click else 0.0) + scale * z[k]
    elif isinstance(policy, CascadeLDPFixed):  # all K values; examinations 1 − Σ_{j<k} y_j
        scale = policy.value_scale(K)
        above = 0.0
        for k in range(K):
            y = (1.0 if k == click else 0.0) + scale * z[k]
            S[a[k]] += y
            N[a[k]] += 1.0 - above
            D[a[k]] += 1.0
            P[a[k]] += k + 1.0
            above += y
    elif isinstance(policy, CascadeDP):
        ks = np.array(list(examined), dtype=np.int64)
        x = (ks == click).astype(float)
        mech.insert(np.zeros(ks.size, dtype=np.int64), a[ks], x, z[ks], unit=s)
        for k in examined:
            N[a[k]] += 1.0
    else:
        leaf = np.zeros(2 * L)
        for k in examined:
            leaf[L + a[k]] = 1.0
        if click < K:
            leaf[a[click]] = 1.0
        mech.step(leaf[None], z[None])
        for k in range(K):
            D[a[k]] += 1.0
