"""CascadeUCB1 (Kveton et al. 2015) and Cascading-UCB under LDP with the Laplace mechanism
(Wang et al. 2021, Algorithm 2, as written) as plain NumPy loops, vectorised across repetitions.

Instance: the default ``cascade:l=20,k=4,p=0.2,gap=0.15``: L = 20 items, attraction
probabilities 0.2 (items 0..3) and 0.05 (the other 16), independent Bernoulli attractions; the
user scans the list of K = 4 items and clicks the first attractive one. Pseudo-regret:
Σ_t (f(A*) − f(A_t)), f(A) = 1 − Π_{e∈A} (1 − w̄(e)).

Both with the paper's initialisation: round 0 plays the data-independent list (items 0..K−1)
and observes w_0 (the whole attraction vector, un-noised): T(e) = 1, ŵ(e) = w_0(e). Round t ≥ 1
(log t natural): U_t(e) = ŵ(e) + sqrt(1.5 log t / T(e)) (+ b sqrt(24 log t / T(e)) for
Algorithm 2, b = K/ε × ``noise_factor``); A_t = the K items of largest U in decreasing order
(ties: lower item first); click C_t; for the examined positions k ≤ min(C_t, K): T(a_k) += 1 and
the sum of a_k gains 1{C_t = k} (Algorithm 2: + Lap(b)).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.family_loops import Case

MEANS = np.array([0.2] * 4 + [0.05] * 16)
L = MEANS.size
K = 4
OPT = 1.0 - np.prod(1.0 - np.sort(MEANS)[-K:])


def _loop(horizon: int, reps: int, seed: int, noise_scale: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = reps
    r = np.arange(R)[:, None]
    pos = np.arange(K)
    # round 0: list (0..K-1), w_0 observed for every item
    regret = OPT - (1.0 - np.prod(1.0 - MEANS[np.broadcast_to(pos, (R, K))], axis=1))
    S = (rng.random((R, L)) < MEANS).astype(float)
    T = np.ones((R, L))
    for t in range(1, horizon):
        lt = math.log(t)
        c = math.sqrt(1.5 * lt) + noise_scale * math.sqrt(24.0 * lt)
        U = S / T + c / np.sqrt(T)
        A = np.argsort(-U, axis=1, kind="stable")[:, :K]
        w = MEANS[A]
        regret += OPT - (1.0 - np.prod(1.0 - w, axis=1))
        hit = rng.random((R, K)) < w
        click = np.where(hit.any(axis=1), hit.argmax(axis=1), K)[:, None]
        examined = pos <= click
        y = (pos == click).astype(float)
        if noise_scale > 0.0:
            y += rng.laplace(0.0, noise_scale, (R, K))
        S[r, A] += np.where(examined, y, 0.0)
        T[r, A] += examined
    return regret


def cascade_ucb_loop(horizon: int, reps: int, seed: int) -> np.ndarray:
    return _loop(horizon, reps, seed, 0.0)


def cascade_ldp_laplace_loop(horizon: int, reps: int, seed: int, epsilon: float = 1.0,
                             noise_factor: float = 0.01) -> np.ndarray:
    return _loop(horizon, reps, seed, noise_factor * K / epsilon)


CASES = [
    Case(family="cascading", algorithm="cascade-ucb", options={}, env=None, loop=cascade_ucb_loop,
         test_horizon=10_000, test_reps=40),
    Case(family="cascading", algorithm="cascade-ldp-laplace", options={"epsilon": 1.0, "noise_factor": 0.01},
         env=None, loop=cascade_ldp_laplace_loop, test_horizon=10_000, test_reps=40,
         note="noise_factor 0.01: the paper's experiments (section 7) multiply all noises (and the privacy "
              "bonus) by 0.01"),
]
