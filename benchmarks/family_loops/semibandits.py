"""CUCB-LDP2 and CUCB-DP (Chen et al. 2020, Algorithms 2 and 3) as plain NumPy loops.

Instance: the default ``topk:k=4,means=0.5x8/0.7x4,reward=min``: m = 12 arms (8 at 0.5, 4 at
0.7), super arms = every K = 4-subset, reward min_{i∈S} X_i with comonotone outcomes (one uniform
U per round, X_i = 1[U < μ_i], so E[min X_S] = min μ_S). Oracle: top-K of the UCBs, ties broken
uniformly at random. Pseudo-regret: Σ_t (0.7 − min_{i∈S_t} μ_i).

Round t = 1..T: μ̄(i) = min{μ̃(i) + bonus(i), 1} (bonus +∞ for a never-updated arm, so μ̄ = 1;
also clipped below at 0, the reading of line 5's "if μ̄ ≥ 0"), S_t = top-K(μ̄).

* CUCB-LDP2: bonus 4 sqrt(2 ln T/(ε² n)); user t reports X_{t,I_t} + Lap(1/ε) for the arm
  I_t = argmin_{i∈S_t} T_i (ties: lower index); only I_t's mean and count are updated.
* CUCB-DP: bonus sqrt(4 ln(mT)/n) + c·12 K ln³T/(n ε) (c = ``bonus_scale``); the server feeds the
  leaf X_t ⊙ 1[S_t] to a binary-mechanism tree (Chan, Shi & Song 2011) with Lap(b) per node
  and coordinate, b = 2K log₂T/ε; for i ∈ S_t: T_i += 1, μ̃_i = (noisy prefix sum)_i / T_i.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.family_loops import Case

MEANS = np.array([0.5] * 8 + [0.7] * 4)
M = MEANS.size
K = 4
OPT = np.sort(MEANS)[-K:].min()


def _top_k(ucb: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Top-K arms of each row, ties broken by the uniform ``keys`` (uniformly at random)."""
    return np.lexsort((keys, -ucb), axis=-1)[:, :K]


def cucb_ldp2_loop(horizon: int, reps: int, seed: int, epsilon: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = reps
    rows = np.arange(R)
    c = 4.0 * math.sqrt(2.0 * math.log(horizon)) / epsilon
    mu = np.zeros((R, M))
    n = np.zeros((R, M))
    regret = np.zeros(R)
    for _ in range(horizon):
        with np.errstate(divide="ignore"):
            ucb = np.clip(mu + c / np.sqrt(n), 0.0, 1.0)   # n = 0: +inf bonus -> 1
        S = _top_k(ucb, rng.random((R, M)))
        mS = MEANS[S]
        regret += OPT - mS.min(axis=1)
        x = rng.random(R)[:, None] < mS                     # comonotone outcomes of S_t
        j = np.argmin(n[rows[:, None], S] * M + S, axis=1)  # least pulled, ties to the lower index
        arm = S[rows, j]
        y = x[rows, j] + rng.laplace(0.0, 1.0 / epsilon, R)
        cnt = n[rows, arm] + 1.0
        mu[rows, arm] += (y - mu[rows, arm]) / cnt
        n[rows, arm] = cnt
    return regret


def cucb_dp_loop(horizon: int, reps: int, seed: int, epsilon: float = 1.0,
                 bonus_scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = reps
    r = np.arange(R)[:, None]
    b = 2.0 * K * math.log2(horizon) / epsilon              # node noise Lap(b)
    a = math.sqrt(4.0 * math.log(M * horizon))
    p = bonus_scale * 12.0 * K * math.log(horizon) ** 3 / epsilon
    levels = horizon.bit_length() + 1
    alpha = np.zeros((R, levels, M))                         # exact node sums of t's binary digits
    alpha_hat = np.zeros((R, levels, M))                     # their noisy values
    prefix = np.zeros((R, M))                                # noisy prefix sum
    mu = np.zeros((R, M))
    n = np.zeros((R, M))
    regret = np.zeros(R)
    for t in range(1, horizon + 1):
        with np.errstate(divide="ignore"):
            ucb = np.clip(mu + a / np.sqrt(n) + p / n, 0.0, 1.0)
        S = _top_k(ucb, rng.random((R, M)))
        mS = MEANS[S]
        regret += OPT - mS.min(axis=1)
        leaf = np.zeros((R, M))
        leaf[r, S] = rng.random(R)[:, None] < mS
        i = (t & -t).bit_length() - 1                        # lowest set bit of t
        node = leaf + alpha[:, :i].sum(axis=1)
        hat = node + rng.laplace(0.0, b, (R, M))
        prefix += hat - alpha_hat[:, :i].sum(axis=1)
        alpha[:, :i] = 0.0
        alpha_hat[:, :i] = 0.0
        alpha[:, i] = node
        alpha_hat[:, i] = hat
        n[r, S] += 1.0
        mu[r, S] = prefix[r, S] / n[r, S]
    return regret


CASES = [
    Case(family="semibandits", algorithm="cucb-ldp2", options={"epsilon": 1.0}, env=None, loop=cucb_ldp2_loop,
         test_horizon=20_000, test_reps=40),
    Case(family="semibandits", algorithm="cucb-dp", options={"epsilon": 1.0, "bonus_scale": 1.0 / 30.0},
         env=None, loop=lambda T, R, s: cucb_dp_loop(T, R, s, bonus_scale=1.0 / 30.0),
         test_horizon=20_000, test_reps=30,
         note="bonus_scale 1/30: the toolkit's documented scaled variant (with the paper's constants every "
              "UCB stays 1 for the whole run)"),
]
