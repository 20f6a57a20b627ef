"""The Lazy family as plain NumPy loops: Anytime-Lazy-UCB (Hu et al. 2024, Algorithm 1) and the
private baselines of its §6, DP-SE (Sajed & Sheffet 2019) and AdaP-UCB (Azize & Basu 2022).

Anytime-Lazy-UCB: pull each arm once (its epoch 0, released as x + Lap(1/ε)); afterwards play
argmax_j μ̃_j + sqrt(3 ln t/O_j) + 3 ln t/(ε O_j) (t the 1-based round, natural log, lowest index
on ties); arm j's epoch r + 1 holds its next 2^{r+1} observations, and when it completes
μ̃_j = (their sum + Lap(1/ε))/2^{r+1}, O_j = 2^{r+1}.

DP-SE: epochs e = 1, 2, ..., Δ_e = 2^{−e}, every arm of the active set S pulled
R_e = ⌈max{32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(εΔ_e)}⌉ times (arm by arm in index order);
μ̃_i = (epoch sum + Lap(1/ε))/R_e; eliminate i with max_k μ̃_k − μ̃_i >
2(sqrt(ln(8|S|e²/β)/(2R_e)) + ln(4|S|e²/β)/(εR_e)); one arm left: play it to the end; β = 1/T.

AdaP-UCB: pull each arm once; then at round t_ℓ (1-based) choose
argmax_a μ̃_a + sqrt(α ln(2t_ℓ)/(2m_a)) + α ln(t_ℓ)/(ε m_a) and play it until its count doubles;
μ̃_a = (sum of its last episode + Lap(1/ε))/m_a, m_a that episode's length; α = 3.1.

Bernoulli rewards; the pseudo-regret counts the initial pulls. Instance: the default, five
Bernoulli arms 0.75, ..., 0.25.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.family_loops import SEC51, Case

MEANS = SEC51


def lazy_ucb_loop(horizon: int, reps: int, seed: int, eps: float = 1.0) -> np.ndarray:
    """Anytime-Lazy-UCB: final pseudo-regret per repetition (shape (reps,))."""
    rng = np.random.default_rng(seed)
    K = MEANS.size
    gaps = MEANS.max() - MEANS
    mu = np.zeros((reps, K))  # private mean of the last completed epoch
    O = np.ones((reps, K))  # its size
    need = np.ones((reps, K), dtype=np.int64)  # size of the epoch in progress
    N = np.zeros((reps, K), dtype=np.int64)
    Phi = np.zeros((reps, K))
    regret = np.zeros(reps)
    rows = np.arange(reps)
    for t in range(horizon):
        if t < K:
            a = np.full(reps, t)
        else:
            L = 3.0 * math.log(t + 1)
            a = (mu + np.sqrt(L / O) + L / (eps * O)).argmax(axis=1)
        x = rng.random(reps) < MEANS[a]
        regret += gaps[a]
        N[rows, a] += 1
        Phi[rows, a] += x
        done = N[rows, a] == need[rows, a]
        if done.any():
            rr, aa = rows[done], a[done]
            n = need[rr, aa]
            mu[rr, aa] = (Phi[rr, aa] + rng.laplace(0.0, 1.0 / eps, rr.size)) / n
            O[rr, aa] = n
            need[rr, aa] = 2 * n
            N[rr, aa] = 0
            Phi[rr, aa] = 0.0
    return regret


def _dpse_length(e: int, active: int, eps: float, beta: float) -> int:
    d = 2.0 ** (-e)
    return math.ceil(max(32.0 * math.log(8.0 * active * e * e / beta) / (d * d),
                         8.0 * math.log(4.0 * active * e * e / beta) / (eps * d)))


def dp_se_loop(horizon: int, reps: int, seed: int, eps: float = 1.0, beta: float | None = None) -> np.ndarray:
    """DP-SE: final pseudo-regret per repetition (shape (reps,)); β = 1/T by default."""
    beta = 1.0 / horizon if beta is None else beta
    rng = np.random.default_rng(seed)
    K = MEANS.size
    gaps = MEANS.max() - MEANS
    active = np.ones((reps, K), dtype=bool)
    Phi = np.zeros((reps, K))
    e = np.ones(reps, dtype=np.int64)
    Re = np.full(reps, _dpse_length(1, K, eps, beta), dtype=np.int64)
    arm = np.zeros(reps, dtype=np.int64)  # the arm whose block is being pulled
    left = Re.copy()  # pulls left in that block
    last = np.zeros(reps, dtype=bool)  # one arm left
    regret = np.zeros(reps)
    rows = np.arange(reps)
    for _ in range(horizon):
        a = arm
        x = rng.random(reps) < MEANS[a]
        regret += gaps[a]
        Phi[rows, a] += x
        left -= 1
        for r in np.flatnonzero((left == 0) & ~last):  # a block ends (rare): next arm or epoch end
            j = int(a[r])
            nxt = np.flatnonzero(active[r, j + 1:])
            if nxt.size:
                arm[r], left[r] = j + 1 + nxt[0], Re[r]
                continue
            S = np.flatnonzero(active[r])
            er, n = int(e[r]), int(Re[r])
            mt = (Phi[r, S] + rng.laplace(0.0, 1.0 / eps, S.size)) / n
            rad = math.sqrt(math.log(8.0 * S.size * er * er / beta) / (2.0 * n)) + \
                math.log(4.0 * S.size * er * er / beta) / (eps * n)
            active[r, S[mt.max() - mt > 2.0 * rad]] = False
            Phi[r] = 0.0
            S = np.flatnonzero(active[r])
            if S.size == 1:
                last[r], arm[r] = True, S[0]
                continue
            e[r] = er + 1
            Re[r] = _dpse_length(er + 1, S.size, eps, beta)
            arm[r], left[r] = S[0], Re[r]
    return regret


def adap_ucb_loop(horizon: int, reps: int, seed: int, eps: float = 1.0, alpha: float = 3.1) -> np.ndarray:
    """AdaP-UCB: final pseudo-regret per repetition (shape (reps,))."""
    rng = np.random.default_rng(seed)
    K = MEANS.size
    gaps = MEANS.max() - MEANS
    mu = np.zeros((reps, K))  # private mean of the last episode
    m = np.ones((reps, K))  # its length
    n = np.zeros((reps, K), dtype=np.int64)  # pulls in completed episodes
    Phi = np.zeros((reps, K))  # reward sum of the episode in progress
    arm = np.zeros(reps, dtype=np.int64)
    left = np.ones(reps, dtype=np.int64)
    regret = np.zeros(reps)
    rows = np.arange(reps)
    for t in range(horizon):
        a = arm
        x = rng.random(reps) < MEANS[a]
        regret += gaps[a]
        Phi[rows, a] += x
        left -= 1
        end = left == 0
        if end.any():  # the episode ends: release its mean, choose the next arm
            rr, aa = rows[end], a[end]
            length = np.maximum(n[rr, aa], 1)
            mu[rr, aa] = (Phi[rr, aa] + rng.laplace(0.0, 1.0 / eps, rr.size)) / length
            m[rr, aa] = length
            n[rr, aa] += length
            Phi[rr, aa] = 0.0
            if t + 1 < K:
                arm[rr], left[rr] = t + 1, 1
            else:
                tl = t + 2  # the next round, 1-based
                idx = mu[rr] + np.sqrt(alpha * math.log(2.0 * tl) / (2.0 * m[rr])) + \
                    alpha * math.log(tl) / (eps * m[rr])
                nxt = idx.argmax(axis=1)
                arm[rr], left[rr] = nxt, n[rr, nxt]
    return regret


CASES = [
    Case("lazy", "lazy-ucb", {"epsilon": 1.0}, None, lazy_ucb_loop,
         test_horizon=20_000, test_reps=20,
         note="Anytime-Lazy-UCB, epsilon = 1, natural log, lowest-index ties"),
    Case("lazy", "dp-se", {"epsilon": 1.0}, None, dp_se_loop, test_horizon=50_000, test_reps=20,
         note="DP-SE, epsilon = 1, beta = 1/T (tested at T = 5e4: epoch 1 is 5 x 1947 round-robin pulls)"),
    Case("lazy", "adap-ucb", {"epsilon": 1.0, "alpha": 3.1}, None, adap_ucb_loop,
         test_horizon=20_000, test_reps=20,
         note="AdaP-UCB, epsilon = 1, alpha = 3.1"),
]
