"""The experiments of Chandak, Hu & Hegde (2023): E1 (Figures 1 and 4a, §5.1: the 7-vector linear
matroid of Table 2, n = 10⁴, ε = 2), E2 (Figure 2: ε ∈ {10⁵, 2, 10⁻⁴}), E4 (Figure 5a, App. A:
R_n/ln n up to n = 10⁶), E5 (Figure 5b, App. A: regret against 1/ε, 50 values in [0.5, 50], linear
fit) and E3 (Figures 3 and 4b, §5.2: the MovieLens-like instance: L = 100, K = 17, n = 2·10⁴,
rewards correlated through a pool of latent users).

The paper's metric is the "expected per-round return" (1/s) Σ_{t≤s} f(A^t, w̄) = f* − R_s/s, with R
the pseudo-regret; OMM and CTS-Gaussian are the non-private baselines; the initialisation is the
paper's (``init="paper"``) unless said otherwise. No repetition counts are given in the paper; ours
are those of :data:`FULL` (20 for E1 and E2).

>>> REDUCED.e4_horizon < FULL.e4_horizon
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.engine.simulator import simulate
from bandits.environments import Environment
from bandits.environments.grammar import parse_combinatorial_env
from bandits.environments.movielens import movielens_env, movielens_like
from bandits.matroid.policies import OMM, CTSGaussian, DPTSMat, DPUCBMat, MatroidPolicy
from bandits.structures.combinatorial import MatroidBasis, problem
from bandits.structures.greedy import greedy

__all__ = [
    "Scale",
    "FULL",
    "REDUCED",
    "E1_ENV",
    "random_greedy_return",
    "run",
    "e1",
    "e2",
    "e4",
    "e5",
    "e3",
]

E1_ENV = "matroid-linear:e1"


@dataclass(frozen=True)
class Scale:
    e1_horizon: int
    e1_reps: int
    e4_horizon: int
    e4_reps: int
    e5_epsilons: tuple[float, ...]
    e5_horizon: int
    e5_reps: int
    e3_horizon: int
    e3_reps: int


FULL = Scale(10_000, 20, 1_000_000, 4, tuple(np.linspace(0.5, 50, 50).tolist()), 10_000, 6, 20_000, 10)
REDUCED = Scale(10_000, 4, 20_000, 2, tuple(np.linspace(0.5, 50, 8).tolist()), 2_000, 3, 1_000, 2)


def random_greedy_return(env: Environment) -> float:
    """The expected return of greedy on i.i.d. continuous random scores (the ε → 0 limit):
    exact, over every order of the ground set (≤ 8 arms)."""
    import itertools

    if env.n_arms > 8:
        raise ValueError(f"exact enumeration needs at most 8 arms, got {env.n_arms}")
    orders = np.array(list(itertools.permutations(range(env.n_arms))))
    structure = env.structure
    if not isinstance(structure, MatroidBasis):
        raise ValueError(f"a matroid-basis environment is needed, got {type(structure).__name__}")
    acts = greedy(structure.matroid, orders)
    return float(env.means[acts].sum(axis=1).mean())


def run(
    policy: MatroidPolicy, env: Environment, horizon: int, reps: int, seed: int = 0, last: bool = False
) -> dict[str, Any]:
    """Pseudo-regret at every checkpoint, the per-round return curve, timings (and with ``last``
    the final action of every repetition)."""
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(policy, env, horizon, reps, seed, progress=False, record_actions=last)
    fin = res.pseudo_regret[:, -1]
    t = res.checkpoints
    return {
        "policy": policy.name,
        "T": horizon,
        "mean": float(fin.mean()),
        "sd": float(fin.std(ddof=1)) if reps > 1 else 0.0,
        "se": float(fin.std(ddof=1) / math.sqrt(reps)) if reps > 1 else 0.0,
        "return": float(env.optimum - fin.mean() / horizon),
        "t": t.tolist(),
        "regret_curve": res.mean().tolist(),
        "return_curve": (env.optimum - res.mean() / t).tolist(),
        "wall": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "last_actions": None if not last or res.actions is None else res.actions[:, -1].tolist(),
    }


def e1(scale: Scale) -> dict[str, dict[str, Any]]:
    """E1 (Fig. 1, Fig. 4a): OMM, CTS-Gaussian, DPUCB-MAT and DPTS-MAT at ε = 2."""
    env = parse_combinatorial_env(E1_ENV)
    pols = (OMM(), CTSGaussian(), DPUCBMat(2.0), DPTSMat(2.0))
    return {p.name: run(p, env, scale.e1_horizon, scale.e1_reps) for p in pols}


def e2(
    scale: Scale, epsilons: tuple[float, ...] = (1e5, 2.0, 1e-4)
) -> dict[str, dict[float, dict[str, Any]]]:
    """E2 (Fig. 2a/b): DPUCB-MAT and DPTS-MAT for each ε."""
    env = parse_combinatorial_env(E1_ENV)
    out: dict[str, dict[float, dict[str, Any]]] = {}
    for cls in (DPUCBMat, DPTSMat):
        out[cls.label] = {eps: run(cls(eps), env, scale.e1_horizon, scale.e1_reps) for eps in epsilons}
    return out


def e4(scale: Scale, epsilon: float = 2.0) -> dict[str, dict[str, Any]]:
    """E4 (Fig. 5a, ε not stated: 2): R_n/ln n at n = 10³ … the horizon (the algorithms are
    anytime, so the checkpoints of one run are the regrets of shorter runs)."""
    env = parse_combinatorial_env(E1_ENV)
    marks = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= scale.e4_horizon] + [scale.e4_horizon]
    marks = sorted(set(marks))
    out = {}
    for cls in (DPUCBMat, DPTSMat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate(
            cls(epsilon), env, scale.e4_horizon, scale.e4_reps, 0, checkpoints=marks, progress=False
        )
        m = res.mean()
        out[cls.label] = {
            "n": marks,
            "regret": m.tolist(),
            "regret_over_log_n": (m / np.log(marks)).tolist(),
            "se": res.stderr().tolist(),
            "wall": time.perf_counter() - t0,
            "cpu": time.process_time() - c0,
        }
    return out


def e5(scale: Scale) -> dict[str, dict[str, Any]]:
    """E5 (Fig. 5b): regret at n against 1/ε and its least-squares line R ≈ a + b/ε."""
    env = parse_combinatorial_env(E1_ENV)
    out = {}
    for cls in (DPUCBMat, DPTSMat):
        t0, c0 = time.perf_counter(), time.process_time()
        reg = np.array(
            [run(cls(eps), env, scale.e5_horizon, scale.e5_reps)["mean"] for eps in scale.e5_epsilons]
        )
        x = 1.0 / np.array(scale.e5_epsilons)
        b, a = np.polyfit(x, reg, 1)
        r2 = 1.0 - float(np.sum((reg - (a + b * x)) ** 2) / np.sum((reg - reg.mean()) ** 2))
        out[cls.label] = {
            "epsilons": list(scale.e5_epsilons),
            "regret": reg.tolist(),
            "intercept": float(a),
            "slope": float(b),
            "r2": r2,
            "wall": time.perf_counter() - t0,
            "cpu": time.process_time() - c0,
        }
    return out


def e3(scale: Scale, coupling: str = "latent") -> dict[str, Any]:
    """E3 (Fig. 3, Fig. 4b, Table 3) on the MovieLens-like instance: the four algorithms at ε = 2,
    and how many of the last basis' movies are in A* (Table 3 lists 8 of 17 overlapping)."""
    env = movielens_env(movielens_like(seed=0), coupling=coupling)
    prob = problem(env.structure)
    best = set(prob.oracle(env.means[None, :])[0].tolist())
    out: dict[str, Any] = {"optimum": env.optimum, "K": prob.k, "L": env.n_arms}
    for pol in (OMM(), CTSGaussian(), DPUCBMat(2.0), DPTSMat(2.0)):
        r = run(pol, env, scale.e3_horizon, scale.e3_reps, last=True)
        r["overlap_with_optimum"] = [len(best & set(a)) for a in r.pop("last_actions")]
        out[pol.name] = r
    return out


TITLE = (
    "Chandak, Hu & Hegde (2023), private matroid bandits: experiments E1-E5"
)


if __name__ == "__main__":  # pragma: no cover - [--full] [--out DIR]: bandits.experiments.notebook_runner
    from bandits.experiments.notebook_runner import main

    raise SystemExit(main("matroid_bandits", TITLE))
