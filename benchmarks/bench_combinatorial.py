"""Speed benchmark of the combinatorial algorithms: rounds per second (one round = one
repetition's round) of the toolkit against a plain per-step NumPy loop in the same run.

Run: ``python benchmarks/bench_combinatorial.py [--rounds T] [--reps R] [--loop-rounds T_loop] [--json]``

Rows (single-threaded, same process; CPU time via ``time.process_time``, wall via
``time.perf_counter``):

1. DPUCB-MAT on the E1 matroid of Chandak, Hu & Hegde (2023) (7 arms, rank 3): ``simulate`` (vectorised over R
   repetitions, rank-table greedy, batched lazy epochs) vs a plain per-step loop, one repetition
   at a time (per round: the index, greedy with ``numpy.linalg.matrix_rank`` tests, the lazy
   epoch update with Laplace noise);
2. the same on the MovieLens-like matroid (100 arms, rank 17): compiled exact greedy (numba),
   the NumPy state engine (``DPAUDIT_NUMBA=0``), and the plain loop;
3. CUCB-LDP2 on the bottleneck instance (12 arms, K = 4): compiled chunk kernel, the NumPy step
   loop (``DPAUDIT_NUMBA=0``), and a plain per-step loop (per round: UCBs, top-K by sorting, least
   pulled arm, one Laplace report).

The plain loops run ``--loop-rounds`` rounds (one repetition) and are reported as rounds/second.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits.engine.simulator import simulate  # noqa: E402
from bandits.engine.tables import reward_table  # noqa: E402
from bandits.environments.grammar import parse_combinatorial_env  # noqa: E402
from bandits.environments.movielens import movielens_env, movielens_like  # noqa: E402
from bandits.matroid.policies import DPUCBMat  # noqa: E402
from bandits.semibandits.policies import CUCBLDP2  # noqa: E402


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def plain_dpucb(env, rounds: int, seed: int = 0) -> float:
    """Algorithm 2 of Chandak, Hu & Hegde (2023) for one repetition, per step, with rank tests;
    returns the regret."""
    V = np.asarray(env.structure.matroid.array)
    mu = env.means
    K, L = env.structure.k, env.n_arms
    eps0 = 2.0 / K
    rng = np.random.default_rng(seed)
    table = reward_table(env, rounds, seed)
    est = table[0] + rng.laplace(0, 1 / eps0, size=L)
    T = np.ones(L)
    s = np.zeros(L, dtype=int)
    buf_sum, buf_n = np.zeros(L), np.zeros(L, dtype=int)
    regret = 0.0
    for t in range(1, rounds):
        lg = math.log(K * t)
        U = est + np.sqrt(3 * lg / T) + 3 * lg / (eps0 * T)
        chosen: list[int] = []
        for e in np.argsort(-U, kind="stable"):
            if np.linalg.matrix_rank(V[chosen + [int(e)]]) == len(chosen) + 1:
                chosen.append(int(e))
                if len(chosen) == K:
                    break
        regret += env.optimum - mu[chosen].sum()
        for e in chosen:
            buf_sum[e] += table[t, e]
            buf_n[e] += 1
            if buf_n[e] == 2 ** (s[e] + 1):
                T[e] = buf_n[e]
                est[e] = (buf_sum[e] + rng.laplace(0, 1 / eps0)) / T[e]
                s[e] += 1
                buf_sum[e], buf_n[e] = 0.0, 0
    return regret


def plain_ldp2(env, rounds: int, horizon: int, seed: int = 0) -> float:
    """Algorithm 2 of Chen et al. (2020) for one repetition, per step; returns the regret."""
    mu = env.means
    m, K, eps = env.n_arms, env.structure.k, 1.0
    rng = np.random.default_rng(seed)
    table = reward_table(env, rounds, seed)
    mean, n = np.zeros(m), np.zeros(m)
    c = 4 * math.sqrt(2 * math.log(horizon)) / eps
    regret = 0.0
    for t in range(rounds):
        with np.errstate(divide="ignore"):
            ucb = np.clip(mean + np.where(n > 0, c / np.sqrt(np.maximum(n, 1)), np.inf), 0, 1)
        S = np.lexsort((rng.random(m), -ucb))[:K]
        regret += env.optimum - env.structure.expected_reward(mu, S[None, :])[0]
        i = S[np.argmin(n[S] * m + S)]
        y = table[t, i] + rng.laplace(0, 1 / eps)
        n[i] += 1
        mean[i] += (y - mean[i]) / n[i]
    return regret


def rows(rounds: int, reps: int, loop_rounds: int) -> list[dict[str, object]]:
    out = []

    def add(name, cpu, wall, n):
        out.append({"row": name, "rounds": n, "cpu_s": cpu, "wall_s": wall, "rounds_per_s": n / wall})

    e1 = parse_combinatorial_env("matroid-linear:e1")
    cpu, wall, _ = timed(lambda: simulate(DPUCBMat(2.0), e1, rounds, reps, 0, progress=False))
    add(f"DPUCB-MAT E1: simulate, R = {reps}", cpu, wall, rounds * reps)
    cpu, wall, _ = timed(lambda: plain_dpucb(e1, loop_rounds))
    add("DPUCB-MAT E1: plain per-step loop", cpu, wall, loop_rounds)

    ml = movielens_env(movielens_like(seed=0))
    n_ml = max(200, rounds // 20)
    simulate(DPUCBMat(2.0), ml, 50, 2, 0, progress=False)  # compile the kernel outside the timing
    cpu, wall, _ = timed(lambda: simulate(DPUCBMat(2.0), ml, n_ml, reps, 0, progress=False))
    add(f"DPUCB-MAT movielens-like: simulate + numba greedy, R = {reps}", cpu, wall, n_ml * reps)
    os.environ["DPAUDIT_NUMBA"] = "0"
    cpu, wall, _ = timed(lambda: simulate(DPUCBMat(2.0), ml, n_ml, reps, 0, progress=False))
    add(f"DPUCB-MAT movielens-like: simulate + NumPy greedy, R = {reps}", cpu, wall, n_ml * reps)
    os.environ["DPAUDIT_NUMBA"] = "1"
    cpu, wall, _ = timed(lambda: plain_dpucb(ml, max(100, loop_rounds // 20)))
    add("DPUCB-MAT movielens-like: plain per-step loop", cpu, wall, max(100, loop_rounds // 20))

    bott = parse_combinatorial_env("topk:k=4,means=0.5x8/0.7x4,reward=min")
    simulate(CUCBLDP2(1.0), bott, 50, 2, 0, progress=False)
    cpu, wall, _ = timed(lambda: simulate(CUCBLDP2(1.0), bott, rounds * 10, reps, 0, progress=False))
    add(f"CUCB-LDP2 bottleneck: simulate + numba kernel, R = {reps}", cpu, wall, rounds * 10 * reps)
    os.environ["DPAUDIT_NUMBA"] = "0"
    cpu, wall, _ = timed(lambda: simulate(CUCBLDP2(1.0), bott, rounds, reps, 0, progress=False))
    add(f"CUCB-LDP2 bottleneck: simulate, NumPy step loop, R = {reps}", cpu, wall, rounds * reps)
    os.environ["DPAUDIT_NUMBA"] = "1"
    cpu, wall, _ = timed(lambda: plain_ldp2(bott, loop_rounds, rounds))
    add("CUCB-LDP2 bottleneck: plain per-step loop", cpu, wall, loop_rounds)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=20_000)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--loop-rounds", type=int, default=5_000)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    res = rows(a.rounds, a.reps, a.loop_rounds)
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{'row':62s} {'rounds':>9s} {'wall s':>8s} {'CPU s':>8s} {'rounds/s':>11s}")
    for r in res:
        print(
            f"{r['row']:62s} {r['rounds']:9d} {r['wall_s']:8.2f} {r['cpu_s']:8.2f} {r['rounds_per_s']:11.0f}"
        )


if __name__ == "__main__":
    main()
