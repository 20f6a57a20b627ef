"""Benchmark: the empirical Thompson-sampling audit (issue 5 item 4).

Run: ``python benchmarks/bench_ts_audit.py [--trials 100000] [--horizon 1000] [--arms 2 5]
[--workers 2] [--json]``

For each number of arms: :func:`bandits.audit.audit_thompson` on ``GaussianTS(b=1, c=1)`` with
the default adversarial neighbour, ``trials`` trajectories per neighbour, batches distributed
over a ``ProcessPoolExecutor``. Prints μ_lower (white-box, black-box), the certified μ (tight
and paper), ε bounds at δ = 1e-6, the verdict and the wall time (split into sampling and, for
N > 2 arms, the losses of the distinct states). The default is the full-scale run of the issue:
2 and 5 arms, T = 1000, 10^5 trajectories per neighbour (target: < 2 min each).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits import GaussianTS  # noqa: E402
from bandits.audit import audit_thompson  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=100_000)
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--arms", type=int, nargs="+", default=[2, 5])
    p.add_argument("--b", type=int, default=1)
    p.add_argument("--c", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    rows = []
    with ProcessPoolExecutor(a.workers) as ex:
        for n in a.arms:
            t0 = time.perf_counter()
            rep = audit_thompson(GaussianTS(b=a.b, c=a.c), a.horizon, n, trials=a.trials, executor=ex,
                                 progress=False)  # fmt: skip
            wall = time.perf_counter() - t0
            d = rep.details
            row = {
                "arms": n, "horizon": a.horizon, "trials_per_neighbour": a.trials, "verdict": rep.verdict,
                "mu_lower_white": d["white_box"]["mu_lower"], "mu_lower_black": d["black_box"]["mu_lower"],
                "mu_certified": rep.certified.mu, "mu_paper": d["mu_paper"],
                "eps_lower_white": d["white_box"]["epsilon_lower"],
                "eps_lower_black": d["black_box"]["epsilon_lower"],
                "eps_lower_mc_profile": d["monte_carlo_profile"]["epsilon_lower"],
                "eps_certified": rep.certified.epsilon, "fraction_recovered": rep.fraction_recovered,
                "wall_seconds": wall, "workers": a.workers,
                "seconds_sampling": d["seconds_sampling"], "seconds_state_losses": d["seconds_state_losses"],
                "distinct_states": d["distinct_states"],
                "likelihood_ratio_check": d["likelihood_ratio_check"]["mean_exp_minus_L_under_R"],
            }  # fmt: skip
            rows.append(row)
            if not a.json:
                print(
                    f"N={n} T={a.horizon} trials={a.trials}: {rep.verdict};"
                    f" mu_lower white {row['mu_lower_white']:.3f}"
                    f" black {row['mu_lower_black']:.3f}; certified mu {row['mu_certified']:.3f} (paper"
                    f" {row['mu_paper']:.3f}); eps@1e-6 white {row['eps_lower_white']:.2f} black"
                    f" {row['eps_lower_black']:.2f} MC-profile {row['eps_lower_mc_profile']:.2f} certified"
                    f" {row['eps_certified']:.2f}; {wall:.1f} s wall ({a.workers} workers: sampling"
                    f" {row['seconds_sampling']:.1f} s, state losses {row['seconds_state_losses']:.1f} s,"
                    f" {row['distinct_states'] or 0} distinct states)",
                    flush=True,
                )
    if a.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
