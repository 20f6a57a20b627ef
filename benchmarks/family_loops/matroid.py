"""DPUCB-MAT and DPTS-MAT (Chandak, Hu & Hegde 2023, Algorithms 2 and 3) as plain NumPy loops.

Instance: the paper's E1 (``matroid-linear:e1``, the default): the linear matroid of the seven
vectors below in R^3 (rank K = 3; e7 is a loop), independent Bernoulli rewards, linear reward
(the sum over the played basis). Pseudo-regret: Σ_t (f(A*) − f(A^t)) with f(A) = Σ_{e∈A} w̄(e).

Algorithm 2 with the paper's literal initialisation: round 0 observes w0(e) for every arm and
releases w̃_e = w0(e) + Lap(1/ε0), T_e = 1 (ε0 = ε/K); the action of round 0 is the greedy basis
on all-equal scores (ties by lower index). Round t ≥ 1: U_t(e) = w̃_e + sqrt(3 ln(Kt)/T_e)
+ 3 ln(Kt)/(ε0 T_e) (DPTS-MAT: θ_e ~ N(w̃_e + 3 ln(Kt)/(ε0 T_e), 1/T_e)); A^t = Greedy(U_t);
each observed arm appends its reward to its buffer and, when the buffer holds 2^{s_e+1}
rewards, releases w̃_e = (Σ buffer + Lap(1/ε0)) / 2^{s_e+1}, T_e = 2^{s_e+1}, empties it.

Greedy: scan the arms by decreasing score (stable: lower index first on ties) and add an arm
when the set stays independent; the independence oracle is a table over the 2^L subsets (bit
masks), computed once from the vectors' ranks.
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from benchmarks.family_loops import Case

VECTORS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [2, 0, 0], [0, 0, 0]], dtype=float)
MEANS = np.array([0.8, 0.75, 0.6, 0.2, 0.3, 0.4, 0.7])
L = VECTORS.shape[0]
K = int(np.linalg.matrix_rank(VECTORS))


def _independence_table(vectors: np.ndarray) -> np.ndarray:
    n = vectors.shape[0]
    table = np.zeros(1 << n, dtype=bool)
    for bits in product((0, 1), repeat=n):
        idx = [i for i in range(n) if bits[i]]
        mask = sum(1 << i for i in idx)
        table[mask] = len(idx) == 0 or np.linalg.matrix_rank(vectors[idx]) == len(idx)
    return table


INDEPENDENT = _independence_table(VECTORS)
BIT = 1 << np.arange(L)


def greedy(scores: np.ndarray) -> np.ndarray:
    """The greedy basis (R, K) for scores (R, L), in greedy order."""
    R = scores.shape[0]
    order = np.argsort(-scores, axis=1, kind="stable")
    mask = np.zeros(R, dtype=np.int64)
    basis = np.empty((R, K), dtype=np.int64)
    size = np.zeros(R, dtype=np.int64)
    rows = np.arange(R)
    for j in range(L):
        e = order[:, j]
        new = mask | BIT[e]
        ok = INDEPENDENT[new] & (size < K)
        basis[rows[ok], size[ok]] = e[ok]
        size += ok
        mask = np.where(ok, new, mask)
    return basis


OPT = MEANS[greedy(MEANS[None, :])[0]].sum()


def _loop(horizon: int, reps: int, seed: int, epsilon: float, rule: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = reps
    b = K / epsilon                          # Lap(1/eps0), eps0 = eps/K
    eps0 = epsilon / K
    rows = np.arange(R)[:, None]
    # round 0: data-independent basis (all scores equal), w0 observed for every arm
    A = greedy(np.zeros((R, L)))
    regret = OPT - MEANS[A].sum(axis=1)
    w0 = (rng.random((R, L)) < MEANS).astype(float)
    est = w0 + rng.laplace(0.0, b, (R, L))
    size = np.ones((R, L))                   # T_e
    need = np.full((R, L), 2.0)              # 2^{s_e+1}: the length of the epoch being filled
    buf_sum = np.zeros((R, L))
    buf_n = np.zeros((R, L))
    for t in range(1, horizon):
        log = math.log(K * t)
        if rule == "ucb":
            scores = est + np.sqrt(3.0 * log / size) + 3.0 * log / (eps0 * size)
        else:
            scores = est + 3.0 * log / (eps0 * size) + rng.standard_normal((R, L)) / np.sqrt(size)
        A = greedy(scores)
        mu = MEANS[A]
        regret += OPT - mu.sum(axis=1)
        x = rng.random((R, K)) < mu
        buf_sum[rows, A] += x
        buf_n[rows, A] += 1.0
        full = buf_n == need
        if full.any():
            n = need[full]
            est[full] = (buf_sum[full] + rng.laplace(0.0, b, n.size)) / n
            size[full] = n
            need[full] = 2.0 * n
            buf_sum[full] = 0.0
            buf_n[full] = 0.0
    return regret


def dpucb_mat_loop(horizon: int, reps: int, seed: int, epsilon: float = 2.0) -> np.ndarray:
    return _loop(horizon, reps, seed, epsilon, "ucb")


def dpts_mat_loop(horizon: int, reps: int, seed: int, epsilon: float = 2.0) -> np.ndarray:
    return _loop(horizon, reps, seed, epsilon, "ts")


CASES = [
    Case(family="matroid", algorithm="dpucb-mat", options={"epsilon": 2.0}, env=None, loop=dpucb_mat_loop,
         test_horizon=5_000, test_reps=40),
    Case(family="matroid", algorithm="dpts-mat", options={"epsilon": 2.0}, env=None, loop=dpts_mat_loop,
         test_horizon=5_000, test_reps=40),
]
