"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer & Hegde 2025) as a plain NumPy loop, written from the
reconstruction in ``docs/dp-ts-ucb.md``.

K arms, horizon T known; φ = ⌈c₀·T^{(1−α)/2}·ln^{(3−α)/2}(T)⌉ samples per epoch mean, sample
variance ln^α(T)/n. Per arm: epoch r holds its next f·2^r observations; when it completes, its
mean replaces the arm's estimate (n = f·2^r), the budget h is reset to φ and the running maximum
M to −∞. Rounds 1..f·K pull round robin; afterwards, every arm with h ≥ 1 draws
θ ~ N(μ̂, ln^α(T)/n) (its index; h ← h − 1, M ← max(M, θ)), every arm with h = 0 reuses M, and
the arm with the largest index is played (lowest index on ties). Bernoulli rewards; the
pseudo-regret counts the initial pulls. Instance: the default, five Bernoulli arms 0.75, ..., 0.25.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from benchmarks.family_loops import SEC51, Case

MEANS = SEC51


def dp_ts_ucb_loop(horizon: int, reps: int, seed: int, alpha: float = 1.0, c0: float = 1.0,
                   first_epoch: int = 1) -> np.ndarray:
    """Final pseudo-regret per repetition (shape (reps,)); φ and ln^α(T) use T = ``horizon``."""
    rng = np.random.default_rng(seed)
    K = MEANS.size
    gaps = MEANS.max() - MEANS
    lnT = math.log(horizon)
    phi = math.ceil(c0 * horizon ** ((1 - alpha) / 2) * lnT ** ((3 - alpha) / 2))
    sqrtL = math.sqrt(lnT**alpha)
    mean = np.zeros((reps, K))
    sd = np.ones((reps, K))
    h = np.zeros((reps, K), dtype=np.int64)  # samples left of the current mean
    M = np.full((reps, K), -np.inf)  # the largest of them
    need = np.full((reps, K), first_epoch, dtype=np.int64)  # size of the epoch in progress
    N = np.zeros((reps, K), dtype=np.int64)  # its observations so far
    Phi = np.zeros((reps, K))  # their sum
    regret = np.zeros(reps)
    rows = np.arange(reps)
    init = min(first_epoch * K, horizon)
    for t in range(horizon):
        if t < init:
            a = np.full(reps, t % K)
        else:
            sampling = h > 0
            theta = mean + sd * rng.standard_normal((reps, K))
            M = np.where(sampling, np.maximum(M, theta), M)
            a = np.where(sampling, theta, M).argmax(axis=1)
            h -= sampling
        x = rng.random(reps) < MEANS[a]
        regret += gaps[a]
        N[rows, a] += 1
        Phi[rows, a] += x
        done = N[rows, a] == need[rows, a]
        if done.any():  # the epoch of the played arm is complete: a new mean, a fresh budget
            rr, aa = rows[done], a[done]
            n = N[rr, aa]
            mean[rr, aa] = Phi[rr, aa] / n
            sd[rr, aa] = sqrtL / np.sqrt(n)
            h[rr, aa] = phi
            M[rr, aa] = -np.inf
            need[rr, aa] = 2 * n
            N[rr, aa] = 0
            Phi[rr, aa] = 0.0
    return regret


def _loop(alpha: float) -> Callable[[int, int, int], np.ndarray]:
    return lambda horizon, reps, seed: dp_ts_ucb_loop(horizon, reps, seed, alpha)


CASES = [
    Case("dp_ts_ucb", "dp-ts-ucb", {"alpha": 1.0}, None, _loop(1.0),
         note="alpha = 1 (phi = ceil(ln T)), c0 = 1, f = 1, sample index, lowest-index ties"),
    Case("dp_ts_ucb", "dp-ts-ucb", {"alpha": 0.5}, None, _loop(0.5),
         note="alpha = 0.5 (phi = ceil(T^0.25 ln^1.25 T)), c0 = 1, f = 1"),
]
