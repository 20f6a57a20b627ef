"""Benchmark: the white-box Thompson-sampling audit at the default audit horizon.

Run: ``python benchmarks/bench_ts_audit.py [--trials 100000] [--arms 2 5] [--workers 2] [--json]``

For each number of arms N: the configuration ``dpaudit run ts`` would choose at T = 10⁵ and 1-GDP (b
by the rule of thumb, c on the certified frontier), audited by
:func:`bandits.thompson.audit.audit_thompson` at the default audit horizon b·N + 2000 with
``trials`` trajectories per neighbouring table (pilot included) on a ``ProcessPoolExecutor``. Prints
the verdict, the μ bounds of both views (actions, posterior draws) against the certificate, the
detection floor, the two-sided estimate, the model tests, and the throughput — implementation
trajectories per second of wall time and per second of CPU time (parent + workers; the CPU time is
what the other jobs on a shared machine do not inflate) — next to a **baseline measured in the same
run**: a plain vectorised NumPy two-arm Thompson-sampling loop (N(μ̂, c/(n+1)) draws, argmax,
update) over the same 2000 private rounds, no statistics. Target (issue 10): 10⁵ trajectories per
side in under a minute for 2 arms and under 3 minutes for 5 arms.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits import GaussianTS, parse_env  # noqa: E402
from bandits.auditing.contract import AuditSettings  # noqa: E402
from bandits.thompson.audit import audit_thompson  # noqa: E402
from bandits.thompson.frontier import budget_pair  # noqa: E402
from bandits.thompson.spec import DEFAULT_AUDIT_PRIVATE_ROUNDS  # noqa: E402


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def baseline(b: int, c: float, rounds: int, reps: int, seed: int = 0) -> tuple[float, float]:
    """Plain two-arm NumPy loop after a b-per-arm pre-pull on tied arms: (traj/s wall, traj/s CPU)."""
    rng = np.random.default_rng(seed)
    t0, c0 = time.perf_counter(), time.process_time()
    S = np.full((reps, 2), 0.5 * b)
    n = np.full((reps, 2), float(b))
    rows = np.arange(reps)
    for _ in range(rounds):
        theta = S / (n + 1.0) + np.sqrt(c / (n + 1.0)) * rng.standard_normal((reps, 2))
        a = theta.argmax(axis=1)
        S[rows, a] += 0.5
        n[rows, a] += 1.0
    return reps / (time.perf_counter() - t0), reps / (time.process_time() - c0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=100_000)
    p.add_argument("--arms", type=int, nargs="+", default=[2, 5])
    p.add_argument("--horizon", type=int, default=100_000, help="the run's horizon (chooses b, c)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    rows = []
    for n_arms in a.arms:
        b, c = budget_pair(a.horizon, n_arms, 1.0)
        T = b * n_arms + DEFAULT_AUDIT_PRIVATE_ROUNDS
        bw, bc = baseline(b, c, DEFAULT_AUDIT_PRIVATE_ROUNDS, 8192)
        cpu0, t0 = _cpu(), time.perf_counter()
        with ProcessPoolExecutor(a.workers) as ex:
            pol = GaussianTS(b=b, c=c)
            env = parse_env("bernoulli:" + ",".join(["0.5"] * n_arms))
            audit = audit_thompson(pol, T, env, AuditSettings(trials=a.trials, executor=ex))
            rep, draws = audit.primary, audit.components["releases"]
            wall = time.perf_counter() - t0
        cpu = _cpu() - cpu0
        d = rep.details
        n_traj = 2 * a.trials + 2 * d["model_trajectories_per_table"]
        row = {
            "arms": n_arms, "b": b, "c": c, "audit_horizon": T, "trials_per_table": a.trials,
            "verdict": audit.verdict, "mu_lower": rep.empirical.mu_lower, "mu_certified": rep.certified.mu,
            "draws_mu_lower": draws.empirical.mu_lower,
            "draws_mu_gaussian_fit": draws.details["mu_gaussian_fit"],
            "statistic": rep.empirical.statistic, "floor_mu": rep.floor.mu,
            "floor_violation_mu": rep.floor.mu_violation,
            "estimate": [rep.estimate.lower, rep.estimate.upper],
            "exact_loss_mu_lower": d["exact_loss"].get("mu_lower"),
            "exact_loss_trajectories": d["exact_loss"].get("trajectories_per_table"),
            "mu_gaussian_fit": d["exact_loss"].get("mu_gaussian_fit"),
            "model_tests_rejected": d["model_tests"]["rejected"],
            "wall_seconds": wall, "cpu_seconds": cpu, "workers": a.workers, "seconds": d["seconds"],
            "implementation_and_model_trajectories": n_traj,
            "traj_per_s_wall": n_traj / wall, "traj_per_s_cpu": n_traj / cpu,
            "baseline_traj_per_s_wall": bw, "baseline_traj_per_s_cpu": bc,
            "peak_rss_mb_parent": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "peak_rss_mb_workers": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        }  # fmt: skip
        rows.append(row)
        if not a.json:
            print(
                f"N={n_arms} b={b} c={c:.4g} T_audit={T}, {a.trials} trajectories per table: "
                f"{audit.verdict}; "
                f"actions: mu >= {row['mu_lower']:.4f} ({row['statistic']}) "
                f"vs certified {row['mu_certified']:.4f}; "
                f"posterior draws: mu >= {row['draws_mu_lower']:.4f} (Gaussian fit "
                f"{row['draws_mu_gaussian_fit']:.4f}); "
                f"floor {row['floor_mu']:.4f} (violation {row['floor_violation_mu']:.4f}); test's mu in "
                f"[{row['estimate'][0]:.4f}, {row['estimate'][1]:.4f}]; exact-loss mu >= "
                f"{row['exact_loss_mu_lower']} on {row['exact_loss_trajectories']} per table, Gaussian fit "
                f"{row['mu_gaussian_fit']}; model tests rejected: {row['model_tests_rejected']}\n"
                f"    {wall:.1f} s wall, {cpu:.1f} s CPU ({a.workers} workers) for {n_traj} trajectories "
                f"(implementation + model): {row['traj_per_s_wall']:.0f}/s wall, "
                f"{row['traj_per_s_cpu']:.0f}/s CPU;"
                f" baseline plain NumPy 2-arm loop: {bw:.0f}/s wall, {bc:.0f}/s CPU; stages {d['seconds']}",
                flush=True,
            )
    if a.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
