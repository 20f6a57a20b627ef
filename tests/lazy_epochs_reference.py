"""An independent plain-loop implementation of Algorithms 1 and 3 of Hu et al. (2024), as written.

Pure Python (``random.Random``: its own Bernoulli rewards, Laplace noise and Beta draws), one
run at a time, 1-based rounds exactly as in the pseudocode, natural-log bonuses, lowest-index
ties, pseudo-regret Σ_t Δ_{J_t} with the K initial pulls included. It
shares no code with :mod:`bandits.lazy.policies`; the regret magnitudes of the two must agree.
"""

from __future__ import annotations

import math
import random


def laplace(rng: random.Random, scale: float) -> float:
    u = rng.random() - 0.5
    return -scale * math.copysign(1.0, u) * math.log(1.0 - 2.0 * abs(u))


def lazy_run(alg: str, means: list[float], eps: float, T: int, seed: int) -> float:
    """Pseudo-regret at T of one run of ``alg`` ("ucb": Alg. 1, "ts": Alg. 3)."""
    rng = random.Random(seed)
    K = len(means)
    best = max(means)
    O = [1.0] * K  # size of the last processed epoch
    mt = [0.0] * K  # private mean of that epoch
    r = [0] * K  # index of the last processed epoch
    N = [0] * K  # unprocessed observations
    Phi = [0.0] * K
    regret = 0.0
    for t in range(1, T + 1):
        if t <= K:  # initialisation: pull arm t once, release it as epoch 0
            j = t - 1
            x = 1.0 if rng.random() < means[j] else 0.0
            mt[j] = x + laplace(rng, 1.0 / eps)
            regret += best - means[j]
            continue
        lt = math.log(t)
        if alg == "ucb":
            idx = [mt[i] + math.sqrt(3 * lt / O[i]) + 3 * lt / (eps * O[i]) for i in range(K)]
        else:
            idx = []
            for i in range(K):
                m = min(1.0, max(0.0, mt[i] + 3 * lt / (eps * O[i])))
                idx.append(rng.betavariate(m * O[i] + 1, (1 - m) * O[i] + 1))
        j = max(range(K), key=lambda i: (idx[i], -i))
        x = 1.0 if rng.random() < means[j] else 0.0
        regret += best - means[j]
        N[j] += 1
        Phi[j] += x
        if N[j] == 2 ** (r[j] + 1):
            O[j] = 2.0 ** (r[j] + 1)
            mt[j] = (Phi[j] + laplace(rng, 1.0 / eps)) / O[j]
            r[j] += 1
            N[j] = 0
            Phi[j] = 0.0
    return regret
