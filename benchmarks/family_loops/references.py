"""The non-private references as plain NumPy loops: UCB1 (Auer, Cesa-Bianchi & Fischer 2002,
Fig. 1) and Beta-Bernoulli Thompson sampling (Agrawal & Goyal 2012), the latter also compiled by
numba.

UCB1: pull each arm once, then play argmax_i S_i/n_i + sqrt(alpha ln t / n_i) with t the number
of rounds played so far (alpha = 2, the paper's bonus sqrt(2 ln t / n)). Beta-TS: Beta(1, 1)
priors, draw θ_i ~ Beta(1 + s_i, 1 + f_i) for every arm, play argmax θ; with Bernoulli rewards
the Bernoulli-trial step is the reward itself. Ties: lowest index. Instance: the default, five
Bernoulli arms 0.75, 0.625, ..., 0.25.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.family_loops import SEC51, Case

MEANS = SEC51


def ucb1_loop(horizon: int, reps: int, seed: int, alpha: float = 2.0) -> np.ndarray:
    """Final pseudo-regret per repetition (shape (reps,))."""
    rng = np.random.default_rng(seed)
    N = MEANS.size
    gaps = MEANS.max() - MEANS
    S = np.zeros((reps, N))
    n = np.zeros((reps, N))
    regret = np.zeros(reps)
    rows = np.arange(reps)
    for t in range(horizon):
        if t < N:
            a = np.full(reps, t)
        else:
            a = (S / n + np.sqrt(alpha * np.log(t) / n)).argmax(axis=1)
        r = rng.random(reps) < MEANS[a]
        S[rows, a] += r
        n[rows, a] += 1.0
        regret += gaps[a]
    return regret


def beta_ts_loop(horizon: int, reps: int, seed: int) -> np.ndarray:
    """Final pseudo-regret per repetition (shape (reps,))."""
    rng = np.random.default_rng(seed)
    N = MEANS.size
    gaps = MEANS.max() - MEANS
    A = np.ones((reps, N))
    B = np.ones((reps, N))
    regret = np.zeros(reps)
    rows = np.arange(reps)
    for _ in range(horizon):
        a = rng.beta(A, B).argmax(axis=1)
        r = rng.random(reps) < MEANS[a]
        A[rows, a] += r
        B[rows, a] += ~r
        regret += gaps[a]
    return regret


beta_ts_numba: Any
try:
    import numba

    @numba.njit(cache=False)
    def _beta_ts_numba(horizon: int, reps: int, rng: np.random.Generator, means: np.ndarray) -> np.ndarray:
        N = means.size
        best = means.max()
        out = np.zeros(reps)
        for r in range(reps):
            A = np.ones(N)
            B = np.ones(N)
            reg = 0.0
            for _ in range(horizon):
                a = 0
                top = -np.inf
                for i in range(N):
                    th = rng.beta(A[i], B[i])
                    if th > top:
                        top = th
                        a = i
                if rng.random() < means[a]:
                    A[a] += 1.0
                else:
                    B[a] += 1.0
                reg += best - means[a]
            out[r] = reg
        return out

    def beta_ts_numba(horizon: int, reps: int, seed: int) -> np.ndarray:
        return _beta_ts_numba(horizon, reps, np.random.default_rng(seed), MEANS)
except ImportError:  # pragma: no cover
    beta_ts_numba = None


CASES = [
    Case("references", "ucb1", {"alpha": 2.0}, None, ucb1_loop, note="UCB1, bonus sqrt(2 ln t / n)"),
    Case("references", "beta-ts", {}, None, beta_ts_loop, beta_ts_numba, note="Beta-Bernoulli TS"),
]
