"""Benchmark: the main job's CPU time against a plain NumPy loop of the same algorithm.

Run ``python benchmarks/bench_main_job.py [--repeat 3] [--json FILE]``. In one run, interleaved:

* ``dpaudit run ts --json`` in a fresh interpreter each time (imports, simulation, certificate,
  ledger check and the audit; CPU seconds of the child, user + system), ``--repeat`` times;
* the plain vectorised NumPy Gaussian Thompson-sampling loop of ``benchmarks/family_loops`` at
  the job's own simulation size and configuration (T = 10⁵, N = 5, R = 10, the b and c the job
  chooses), CPU seconds in this process.

Prints the medians, their ratio (issue 22's target: at most 3), and the audit's numbers, so that a
change of speed can be read next to what the audit still shows. Then, once, the CPU seconds of
the policy's own agent playing the audit's main sample alone (both neighbouring tables of the
design the pilot chose, in the audit's blocks, the changed arm's draws read as the audit reads
them), against the same loop: what any audit of this power that plays the real agent pays before
its pilot, statistics, exact loss, model sample and tests. ``--args`` replaces the job's
options (the suite runs a small job this way).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from benchmarks.family_loops.thompson import gaussian_ts_loop  # noqa: E402

TARGET = 3.0
"""Issue 22: the main job at most this many times the plain loop's CPU time."""


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_job(args: list[str]) -> tuple[float, dict[str, Any]]:
    """CPU seconds of one ``dpaudit run ts ARGS --json`` in a fresh interpreter, and its report."""
    before = _child_cpu()
    out = subprocess.run([sys.executable, "-m", "dpaudit", "run", "ts", *args, "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return _child_cpu() - before, json.loads(out)


def run_loop(horizon: int, reps: int, b: int, c: float, seed: int = 0) -> float:
    """CPU seconds of the plain NumPy loop at the job's size and configuration."""
    t = time.process_time()
    gaussian_ts_loop(horizon, reps, seed, b=b, c=c)
    return time.process_time() - t


def audit_numbers(report: dict[str, Any]) -> dict[str, Any]:
    """What the audit showed: verdict, both views' μ lower bounds, certificate, floor, estimate."""
    a = report["audit"]
    views = {"outputs": a["empirical"]["mu_lower"]}
    for name, comp in a["details"].get("components", {}).items():
        views[name] = comp["empirical"]["mu_lower"]
    est, floor, measured = a["estimate"], a["detection_floor"], a["details"].get("algorithm_floor")
    if floor is not None:  # the reference floor decided
        floor_mu, source = floor["mu"], "reference"
    else:  # measured on the algorithm (or kept from such a measurement): the detection leak x the certificate
        floor_mu, source = measured["detect_leak"] * measured["certified"], "measured on the algorithm"
    return {"verdict": a["verdict"], "horizon": a["horizon"], "trials": a["trials"],
            "mu_certified": a["details"]["mu_certified"], "mu_lower": views,
            "floor_mu": floor_mu, "floor_source": source, "estimate": [est["lower"], est["upper"]],
            "model_tests": len(a["details"]["model_tests"]["tests"])}  # fmt: skip


def trajectories(report: dict[str, Any]) -> dict[str, Any]:
    """CPU seconds (this process) of the agent playing the main sample of the audit in ``report``
    alone, after a small warm-up (numba's kernels loaded), and what it drew."""
    import numpy as np

    from bandits.thompson.audit import ThompsonAuditOptions
    from bandits.thompson.audit_pilot import pilot_plan
    from bandits.thompson.audit_trajectories import _blocks, policy_actions
    from bandits.thompson.policy import GaussianTS

    d = report["audit"]["details"]
    policy, horizon, arms = GaussianTS(b=d["b"], c=d["c"]), d["horizon"], d["arms"]
    designs = pilot_plan(arms, d["trials_per_neighbour"], ThompsonAuditOptions().pilot_fraction, None)[0]
    tables = designs[d["pilot"]["chosen_design"]].tables(policy, horizon, arms)
    n, watch = d["certifying_test"]["trajectories_per_table"], tables.observer
    watch = -1 if watch is None else watch
    policy_actions(policy, tables.null, horizon, 2, np.random.SeedSequence(1), watch=watch)  # warm-up
    t = time.process_time()
    for side, table in enumerate((tables.null, tables.alt)):
        for block, size in enumerate(_blocks(n)):  # the audit's own blocks (sample_stage)
            policy_actions(policy, table, horizon, size, np.random.SeedSequence(0, spawn_key=(side, block)),
                           watch=watch)  # fmt: skip
    rounds = horizon - tables.first_private_round
    return {"cpu_s": time.process_time() - t, "per_table": n, "private_rounds": rounds,
            "normals": 2 * n * rounds * arms}  # fmt: skip


def measure(repeat: int, args: list[str]) -> dict[str, Any]:
    """Medians of ``repeat`` interleaved measurements of both."""
    job, loop, report = [], [], {}
    for _ in range(repeat):
        cpu, report = run_job(args)
        job.append(cpu)
        cfg = report["config"]
        loop.append(run_loop(cfg["horizon"], cfg["reps"], cfg["prepulls"], cfg["variance_scale"]))
    cfg = report["config"]
    played = trajectories(report)
    return {"command": "dpaudit run ts " + " ".join(args), "repeat": repeat, "job_cpu_s": job,
            "loop_cpu_s": loop, "job_s": statistics.median(job), "loop_s": statistics.median(loop),
            "ratio": statistics.median(job) / statistics.median(loop), "target": TARGET,
            "size": {k: cfg[k] for k in ("horizon", "arms", "reps", "prepulls", "variance_scale")},
            "timing": report["timing"], "audit": audit_numbers(report), "trajectories": played}  # fmt: skip


def sentence(row: dict[str, Any]) -> str:
    """The README's summary of one measurement."""
    s, a = row["size"], row["audit"]
    t = row["timing"]
    views = ", ".join(f"{k} mu >= {math.floor(v * 1e4) / 1e4:.4f}" for k, v in a["mu_lower"].items())
    met = "met" if row["ratio"] <= row["target"] else "not met"
    certified = math.ceil(a["mu_certified"] * 1e4) / 1e4
    return (f"`{row['command'].strip()}` {row['job_s']:.1f} s of CPU (median of {row['repeat']}, a fresh "
            f"interpreter each; simulation {t['simulation']:.1f} s, audit {t['audit']:.1f} s of wall time) "
            f"against {row['loop_s']:.2f} s for the plain NumPy loop at T = {s['horizon']:,}, "
            f"N = {s['arms']}, R = {s['reps']} (b = {s['prepulls']}, c = {s['variance_scale']:.4g}): "
            f"{row['ratio']:.1f}× (target ≤ {row['target']:g}×: {met}); the audit: {a['verdict']}, {views} "
            f"against the certified {certified:.4f}, floor mu {a['floor_mu']:.4g} "
            f"({a.get('floor_source', 'reference')}), "
            f"{a['model_tests']} model tests" + _trajectories_clause(row))


def _power_of_ten(x: float) -> str:
    """``x`` as m·10ᵉ (one decimal), e.g. 3.6·10⁸."""
    e = math.floor(math.log10(x))
    return f"{x / 10**e:.1f}·10{str(e).translate(str.maketrans('0123456789-', '⁰¹²³⁴⁵⁶⁷⁸⁹⁻'))}"


def _trajectories_clause(row: dict[str, Any]) -> str:
    p = row.get("trajectories")
    if p is None:
        return ""
    ratio = p["cpu_s"] / row["loop_s"]
    verdict = ("above the target before any statistic" if ratio > row["target"]
               else "within the target")  # fmt: skip
    return (f"; the agent playing the audit's main sample alone (2 × {p['per_table']:,} trajectories of "
            f"{p['private_rounds']:,} private rounds, {_power_of_ten(p['normals'])} posterior normals) "
            f"{p['cpu_s']:.1f} s of CPU, {ratio:.1f}× the loop: {verdict}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--args", default="", help="options of dpaudit run ts (default: none, the main job)")
    p.add_argument("--json", default=None, help="write the measurement to this file")
    a = p.parse_args(argv)
    if a.repeat < 1:
        p.error(f"--repeat must be >= 1, got {a.repeat}")
    if a.json:
        open(a.json, "a").close()  # nothing measured is lost to a bad path
    row = measure(a.repeat, a.args.split())
    print(sentence(row))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(row, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
