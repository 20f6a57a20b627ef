"""Speed benchmark: Gaussian-prior Thompson sampling, T = 1e5, N = 5, 10 repetitions.

Run: ``python benchmarks/bench_bandits.py [--horizon T] [--reps R] [--loop-horizon T_loop] [--json]``

Rows (all single-threaded, same process, same machine; best of ``--repeat`` runs, CPU time
via ``time.process_time`` and wall time via ``time.perf_counter``):

1. ``simulate(GaussianTS())`` — the toolkit: vectorised over repetitions + exact speculative
   engine (default);
2. ``simulate(GaussianTS(engine="step"))`` — the toolkit's plain vectorised-over-repetitions
   step loop (one NumPy round per t for all R repetitions);
3. a plain per-step NumPy loop, one repetition at a time (per step: draw N normals, argmax,
   draw a reward, update) — run on ``--loop-horizon`` steps (default 1e4) and scaled
   linearly to T (the per-step cost is constant);
4. drawing the random numbers alone: T·R·N standard normals and T·R·N uniforms turned into
   Bernoulli rewards, in the same per-repetition chunks the simulator uses.

Target: row 1 under 0.5 s on one core.
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

from bandits import BernoulliEnv, GaussianTS, rep_streams, simulate  # noqa: E402
from bandits.engine.memory import DEFAULT_CHUNK  # noqa: E402

MEANS = (0.75, 0.625, 0.5, 0.375, 0.25)


def _timed(fn, repeat: int) -> tuple[float, float, object]:
    best_cpu, best_wall, out = math.inf, math.inf, None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return best_cpu, best_wall, out


def plain_loop(horizon: int, reps: int, seed: int) -> float:
    """Per-step NumPy loop, one repetition at a time; returns mean pseudo-regret."""
    mu = np.array(MEANS)
    gaps = mu.max() - mu
    total = 0.0
    for r in range(reps):
        st = rep_streams(seed, r)
        g_pol = np.random.Generator(np.random.PCG64(st.policy))
        g_rew = np.random.Generator(np.random.PCG64(st.rewards))
        S = np.zeros(mu.size)
        n = np.zeros(mu.size)
        reg = 0.0
        for _ in range(horizon):
            theta = S / (n + 1.0) + g_pol.standard_normal(mu.size) / np.sqrt(n + 1.0)
            a = int(theta.argmax())
            S[a] += float(g_rew.random() < mu[a])
            n[a] += 1.0
            reg += gaps[a]
        total += reg
    return total / reps


def draw_only(horizon: int, reps: int, seed: int, n_arms: int) -> float:
    """Draw the simulator's random numbers (normals + Bernoulli rewards), nothing else."""
    s = 0.0
    for r in range(reps):
        st = rep_streams(seed, r)
        g_pol = np.random.Generator(np.random.PCG64(st.policy))
        g_rew = np.random.Generator(np.random.PCG64(st.rewards))
        p = np.array(MEANS)
        for t0 in range(0, horizon, DEFAULT_CHUNK):
            c = min(horizon, t0 + DEFAULT_CHUNK) - t0
            z = g_pol.standard_normal((c, n_arms))
            x = g_rew.random((c, n_arms)) < p
            s += z[0, 0] + x[0, 0]
    return s


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--loop-horizon", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args(argv)
    T, R = args.horizon, args.reps
    env = BernoulliEnv(MEANS)
    simulate(GaussianTS(), env, 2000, repetitions=R, seed=args.seed, progress=False)  # warm-up

    def run(engine: str):
        return simulate(GaussianTS(engine=engine), env, T, repetitions=R, seed=args.seed, progress=False)

    fast_cpu, fast_wall, fast = _timed(lambda: run("speculative"), args.repeat)
    auto_cpu, auto_wall, auto = _timed(lambda: run("auto"), args.repeat)
    step_cpu, step_wall, step = _timed(lambda: run("step"), max(1, args.repeat - 1))
    TL = min(args.loop_horizon, T)
    loop_cpu, loop_wall, loop_reg = _timed(lambda: plain_loop(TL, R, args.seed), 1)
    loop_cpu, loop_wall = loop_cpu * T / TL, loop_wall * T / TL
    rng_cpu, rng_wall, _ = _timed(lambda: draw_only(T, R, args.seed, env.n_arms), args.repeat)

    same = bool(np.array_equal(fast.pseudo_regret, step.pseudo_regret)) and bool(
        np.array_equal(auto.pseudo_regret, step.pseudo_regret))
    out = {
        "task": f"Gaussian TS (b=0, c=1), Bernoulli {list(MEANS)}, T={T}, N={env.n_arms}, R={R}",
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "toolkit_speculative_cpu_s": fast_cpu,
        "toolkit_speculative_wall_s": fast_wall,
        "toolkit_default_cpu_s": auto_cpu,
        "toolkit_default_wall_s": auto_wall,
        "toolkit_step_cpu_s": step_cpu,
        "plain_loop_cpu_s_scaled": loop_cpu,
        "plain_loop_measured_steps": TL * R,
        "draw_random_numbers_cpu_s": rng_cpu,
        "speedup_vs_plain_loop": loop_cpu / fast_cpu,
        "speedup_vs_step_engine": step_cpu / fast_cpu,
        "ratio_to_rng_only": fast_cpu / rng_cpu,
        "pseudo_regret_mean": fast.final("pseudo"),
        "pseudo_regret_stderr": float(fast.stderr("pseudo")[-1]),
        "empirical_regret_mean": fast.final("empirical"),
        "empirical_regret_stderr": float(fast.stderr("empirical")[-1]),
        "plain_loop_pseudo_regret_at_loop_horizon": loop_reg,
        "engines_identical": same,
        "target_met": fast_cpu < 0.5,
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(out["task"] + f"   (load average {out['load_average']:.2f})")
        print(
            f"  toolkit, speculative engine   {fast_cpu:7.3f} s CPU ({fast_wall:.3f} s wall)   "
            f"target < 0.5 s: {'met' if out['target_met'] else 'MISSED'}"
        )
        print(f"  toolkit, default engine       {auto_cpu:7.3f} s CPU ({auto_wall:.3f} s wall)   "
              "(\"auto\": the compiled round loop when numba is installed)")
        print(f"  toolkit, step engine          {step_cpu:7.3f} s CPU   x{out['speedup_vs_step_engine']:.1f}")
        print(
            f"  plain per-step loop (1 rep)   {loop_cpu:7.3f} s CPU   x{out['speedup_vs_plain_loop']:.1f}"
            f"   [measured on {TL} steps x {R} reps, scaled x{T / TL:g}]"
        )
        print(
            f"  drawing the random numbers    {rng_cpu:7.3f} s CPU   toolkit / rng-only = "
            f"{out['ratio_to_rng_only']:.2f}"
        )
        print(
            f"  regret at T: pseudo {out['pseudo_regret_mean']:.1f} ± {out['pseudo_regret_stderr']:.1f}, "
            f"empirical {out['empirical_regret_mean']:.1f} ± {out['empirical_regret_stderr']:.1f} "
            "(± s.e.); "
            f"engines identical: {same}"
        )
    return out


if __name__ == "__main__":
    main()
