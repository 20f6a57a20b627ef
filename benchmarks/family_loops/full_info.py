"""RNM-FTNL (Hu et al. 2024, Alg. 4), full information, as a plain NumPy loop.

Global doubling epochs: epoch 0 is round 0 (play action 0); epoch s ≥ 1 is the 0-based rounds
2^s − 1 .. 2^{s+1} − 2. During epoch s the leader released at the end of epoch s − 1 is played
and the K sums of epoch s's reward vectors are accumulated; at its end the next leader is
J = argmax_j (Φ_j + Lap_j(b)), b = 1/ε ("published") or 2/ε ("corrected"), and Φ restarts at 0.
Pseudo-regret: Σ_t (max_j μ_j − μ_{J_t}).

Instance: the default ``bernoulli:0.6,0.5,0.5,0.5`` (independent Bernoulli rewards, the whole
vector observed every round).
"""

from __future__ import annotations

import numpy as np

from benchmarks.family_loops import Case

MEANS = np.array([0.6, 0.5, 0.5, 0.5])


def rnm_ftnl_loop(horizon: int, reps: int, seed: int, epsilon: float = 1.0, noise: str = "published",
                  means: np.ndarray = MEANS) -> np.ndarray:
    rng = np.random.default_rng(seed)
    K = means.size
    b = (1.0 if noise == "published" else 2.0) / epsilon
    gaps = means.max() - means
    arm = np.zeros(reps, dtype=np.int64)     # epoch 0 plays the first action
    phi = np.zeros((reps, K))
    regret = np.zeros(reps)
    end = 1                                  # first round of the next epoch (epoch s ends at 2^{s+1} - 1)
    for t in range(horizon):
        regret += gaps[arm]
        phi += rng.random((reps, K)) < means
        if t + 1 == end:                     # end of the epoch: report-noisy-max release
            arm = np.argmax(phi + rng.laplace(0.0, b, (reps, K)), axis=1)
            phi[:] = 0.0
            end = 2 * end + 1
    return regret


CASES = [
    Case(
        family="full_info",
        algorithm="rnm-ftnl",
        options={"epsilon": 1.0},
        env=None,
        loop=rnm_ftnl_loop,
        test_horizon=5_000,
        test_reps=200,
    ),
]
