"""Speed benchmark: the grid algorithms of Hu et al. (2024), time per 10⁶ rounds × 20 runs, engine
vs step loop.

Run: ``python benchmarks/bench_private_stochastic.py [--horizon T] [--reps R] [--loop-horizon T_loop]
[--eps E] [--json]``

For each algorithm of the grid of Hu et al. (2024), §6 (Anytime-Lazy-UCB, Lazy-DP-TS, DP-SE, AdaP-KLUCB) on
setting 1, in the same process:

1. the toolkit's default engine (``simulate(policy)``: Anytime-Lazy-UCB's window engine that
   jumps between epoch ends, Lazy-DP-TS's numba kernel, the segment engines of DP-SE and AdaP)
   at T rounds × R runs;
2. the plain per-step NumPy loop of the same algorithm (``engine="step"``: one ``select``/
   ``update`` per round, vectorised across the R runs) on ``--loop-horizon`` rounds, scaled
   linearly to T (its per-round cost does not depend on t); both give identical actions
   (tests/test_private_stochastic_bandits.py), which the benchmark re-checks on the common prefix.

It also prints the projected wall time of the full grid (2 settings × 3 ε × these 4
algorithms) on 2 workers; ``python -m bandits.experiments.private_stochastic_bandits --full`` measures it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits.engine.compiled import HAVE_NUMBA  # noqa: E402
from bandits.engine.simulator import simulate  # noqa: E402
from bandits.environments import parse_env  # noqa: E402
from bandits.lazy.baselines import DPSE, AdaP  # noqa: E402
from bandits.lazy.policies import LazyDPTS, LazyUCB  # noqa: E402

ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"


def policies(eps: float, T: int) -> dict[str, tuple]:
    return {
        "Anytime-Lazy-UCB": (LazyUCB(epsilon=eps), LazyUCB(epsilon=eps, engine="step")),
        "Lazy-DP-TS": (LazyDPTS(epsilon=eps), LazyDPTS(epsilon=eps, engine="step")),
        "DP-SE": (DPSE(epsilon=eps, beta=1.0 / T), DPSE(epsilon=eps, beta=1.0 / T, engine="step")),
        "AdaP-KLUCB": (AdaP(epsilon=eps), AdaP(epsilon=eps, engine="step")),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--horizon", type=int, default=1_000_000)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--loop-horizon", type=int, default=100_000)
    p.add_argument("--eps", type=float, default=0.5)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    env = parse_env(ENV)
    rows = []
    if HAVE_NUMBA:  # compile (or load the cached kernel) outside the timings
        simulate(LazyDPTS(epsilon=a.eps), env, 200, 1, progress=False)
    for name, (fast, step) in policies(a.eps, a.horizon).items():
        t0 = time.perf_counter()
        res = simulate(fast, env, a.horizon, a.reps, seed=0, progress=False, record_actions=False)
        t_fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        simulate(step, env, a.loop_horizon, a.reps, seed=0, progress=False)
        t_step = (time.perf_counter() - t0) * a.horizon / a.loop_horizon
        # identical actions on a common prefix (fast engine re-run at the loop horizon)
        pre = min(a.loop_horizon, 20_000)
        x = simulate(fast, env, pre, 2, seed=3, record_actions=True, progress=False).actions
        y = simulate(step, env, pre, 2, seed=3, record_actions=True, progress=False).actions
        rows.append(
            {
                "algorithm": name,
                "engine": "numba kernel"
                if name == "Lazy-DP-TS" and HAVE_NUMBA
                else ("step" if name == "Lazy-DP-TS" else "jump engine"),
                "seconds": t_fast,
                "step_loop_seconds": t_step,
                "speedup": t_step / t_fast,
                "identical_actions": bool(np.array_equal(x, y)),
                "regret": res.final(),
            }
        )
    per_setting_eps = sum(r["seconds"] for r in rows)
    out = {
        "horizon": a.horizon,
        "reps": a.reps,
        "epsilon": a.eps,
        "loop_horizon": a.loop_horizon,
        "numba": HAVE_NUMBA,
        "rows": rows,
        "projected_grid_seconds_2_workers": 6 * per_setting_eps / 2,
    }
    if a.json:
        print(json.dumps(out, indent=1))
        return 0
    print(
        f"grid algorithms of Hu et al. (2024), setting 1, eps = {a.eps:g}: {a.horizon} rounds x "
        f"{a.reps} runs "
        f"(step loops measured on {a.loop_horizon} rounds, scaled linearly)"
    )
    print(
        f"{'algorithm':18s} {'engine':13s} {'seconds':>9s} {'step loop s':>12s} {'speed-up':>9s}"
        "  identical  regret"
    )
    for r in rows:
        print(
            f"{r['algorithm']:18s} {r['engine']:13s} {r['seconds']:9.1f} {r['step_loop_seconds']:12.1f} "
            f"{r['speedup']:8.1f}x  {str(r['identical_actions']):9s}  {r['regret']:.0f}"
        )
    print(
        f"projected full grid (2 settings x 3 eps x 4 algorithms, 2 workers): "
        f"{out['projected_grid_seconds_2_workers'] / 60:.1f} min (target < 15 min)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
