"""Gaussian Thompson sampling with (b, c) (Ou, Avella Medina & Cummings 2024, Algorithms 1-2) as a
plain NumPy loop, and the same loop compiled by numba.

From the pseudocode: pre-pull every arm b times (arm 0 b times, then arm 1, ...); then in every
round draw θ_i ~ N(S_i/(n_i+1), c/(n_i+1)) for every arm (prior N(0, c) on an unpulled arm) and
play argmax θ (lowest index on ties). Bernoulli rewards; the pseudo-regret counts the pre-pulls.
Instance: the algorithm's default, five Bernoulli arms 0.75, 0.625, ..., 0.25.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.family_loops import SEC51, Case

MEANS = SEC51


def gaussian_ts_loop(horizon: int, reps: int, seed: int, b: int = 0, c: float = 1.0) -> np.ndarray:
    """Final pseudo-regret per repetition (shape (reps,))."""
    rng = np.random.default_rng(seed)
    N = MEANS.size
    gaps = MEANS.max() - MEANS
    S = np.zeros((reps, N))
    n = np.zeros((reps, N))
    regret = np.zeros(reps)
    rows = np.arange(reps)
    t = 0
    for arm in range(N):  # pre-pulls: arm 0 b times, then arm 1, ... (data-independent)
        k = min(b, horizon - t)
        if k <= 0:
            break
        S[:, arm] += rng.binomial(k, MEANS[arm], size=reps)
        n[:, arm] += k
        regret += k * gaps[arm]
        t += k
    sqrtc = np.sqrt(c)
    for _ in range(t, horizon):
        n1 = n + 1.0
        theta = S / n1 + sqrtc / np.sqrt(n1) * rng.standard_normal((reps, N))
        a = theta.argmax(axis=1)
        r = rng.random(reps) < MEANS[a]
        S[rows, a] += r
        n[rows, a] += 1.0
        regret += gaps[a]
    return regret


numba_loop: Any
try:
    import numba

    @numba.njit(cache=False)
    def _ts_numba(horizon: int, reps: int, rng: np.random.Generator, b: int, c: float,
                  means: np.ndarray) -> np.ndarray:
        N = means.size
        best = means.max()
        out = np.zeros(reps)
        sqrtc = np.sqrt(c)
        for r in range(reps):
            S = np.zeros(N)
            n = np.zeros(N)
            reg = 0.0
            t = 0
            for arm in range(N):
                for _ in range(b):
                    if t >= horizon:
                        break
                    S[arm] += 1.0 if rng.random() < means[arm] else 0.0
                    n[arm] += 1.0
                    reg += best - means[arm]
                    t += 1
            while t < horizon:
                a = 0
                top = -np.inf
                for i in range(N):
                    n1 = n[i] + 1.0
                    th = S[i] / n1 + sqrtc / np.sqrt(n1) * rng.standard_normal()
                    if th > top:
                        top = th
                        a = i
                S[a] += 1.0 if rng.random() < means[a] else 0.0
                n[a] += 1.0
                reg += best - means[a]
                t += 1
            out[r] = reg
        return out

    def numba_loop(horizon: int, reps: int, seed: int, b: int = 0, c: float = 1.0) -> np.ndarray:
        return _ts_numba(horizon, reps, np.random.default_rng(seed), b, c, MEANS)
except ImportError:  # pragma: no cover
    numba_loop = None


def _numpy(b: int, c: float) -> Callable[[int, int, int], np.ndarray]:
    return lambda horizon, reps, seed: gaussian_ts_loop(horizon, reps, seed, b, c)


def _numba(b: int, c: float) -> Callable[[int, int, int], np.ndarray] | None:
    if numba_loop is None:
        return None
    return lambda horizon, reps, seed: numba_loop(horizon, reps, seed, b, c)


CASES = [
    Case("thompson", "ts", {"prepulls": 0, "variance_scale": 1.0}, None, _numpy(0, 1.0), _numba(0, 1.0),
         note="Algorithm 1 (b = 0, c = 1)"),
    Case("thompson", "ts", {"prepulls": 20, "variance_scale": 4.0}, None, _numpy(20, 4.0), _numba(20, 4.0),
         note="Algorithm 2 with b = 20, c = 4"),
]
