"""Is the reported detection floor honest? Mechanisms placed exactly at it, audited many times.

For each mechanism (Gaussian with a μ claim, Laplace and binary randomised response with ε
claims, all certified at 1), one default audit (``run_audit``, pilot selection) reports its
floor (:mod:`dpaudit.audit.procedure_floor`). Then

* **floor**: the mechanism is rebuilt with its true privacy *at the floor* (σ = 1/μ_floor,
  b = 1/ε_floor, ε_RR = ε_floor) and audited with ``--seeds`` independent seeds against the
  same claim; the fraction whose lower bound is > 0 should be 50 %;
* **violation**: the same at the violation floor; the fraction called ``violated`` should be
  50 %.

The oracle floor (:func:`dpaudit.audit.power.floor_report`, what the audit reported before) is
listed beside it with the detection rate it would have promised 50 % for. Run::

    python benchmarks/bench_floor_check.py                   # 400 seeds, 2·10⁴ trials (~1 min)
    python benchmarks/bench_floor_check.py --seeds 1000 --trials 20000 200000 --json docs/img/floor_check.json

``tests/test_procedure_floor.py`` runs it at 60 seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dpaudit.audit.power import floor_report  # noqa: E402
from dpaudit.audit.runner import run_audit  # noqa: E402
from mechanisms.auditing.targets import gaussian_target, laplace_target, randomized_response_target  # noqa: E402
from mechanisms.gaussian import GaussianMechanism  # noqa: E402
from mechanisms.laplace import LaplaceMechanism  # noqa: E402
from mechanisms.randomized_response import RandomizedResponse  # noqa: E402

MECHANISMS = ("gaussian", "laplace", "randomized-response")


def _target(name: str, strength: float | None) -> Any:
    """The mechanism ``name`` certified at 1, running with true privacy ``strength`` (None: 1)."""
    if strength is None:
        return {"gaussian": gaussian_target, "laplace": laplace_target,
                "randomized-response": randomized_response_target}[name](1.0)  # fmt: skip
    if name == "gaussian":
        return gaussian_target(1.0, mechanism=GaussianMechanism(sigma=1 / strength))
    if name == "laplace":
        return laplace_target(1.0, mechanism=LaplaceMechanism(scale=1 / strength))
    return randomized_response_target(1.0, mechanism=RandomizedResponse(strength))


def _detected(name: str, strength: float, trials: int, seeds: int, violation: bool) -> int:
    hits = 0
    for seed in range(seeds):
        r = run_audit(_target(name, strength), trials=trials, seed=10_000 + seed)
        bound = r.empirical.mu_lower if name == "gaussian" else r.empirical.epsilon_lower
        hits += int(r.verdict == "violated") if violation else int(bound > 0)
    return hits


def check(name: str, trials: int, seeds: int) -> dict[str, Any]:
    """One mechanism's row (module docstring)."""
    t0 = time.perf_counter()
    rep = run_audit(_target(name, None), trials=trials, seed=0)
    t1 = time.perf_counter()
    f = rep.floor
    assert f is not None
    low = f.mu if name == "gaussian" else f.epsilon
    viol = f.mu_violation if name == "gaussian" else f.epsilon_violation
    assert low is not None and viol is not None
    sel = rep.details["selection"]
    n = sel["main_trials_per_side"]
    kind = "mu" if name == "gaussian" else "epsilon"
    mu_c, eps_c = (1.0, None) if kind == "mu" else (None, 1.0)
    oracle = floor_report(n, n, 0.025, certified_mu=mu_c, certified_epsilon=eps_c, delta=rep.empirical.delta)
    o_low = oracle.mu if kind == "mu" else oracle.epsilon
    o_viol = oracle.mu_violation if kind == "mu" else oracle.epsilon_violation
    row = {
        "mechanism": name,
        "trials": trials,
        "seeds": seeds,
        "floor": low,
        "violation_floor": viol,
        "oracle_floor": o_low,
        "oracle_violation_floor": o_viol,
        "floor_seconds": t1 - t0,
        "floor_detected": _detected(name, low, trials, seeds, False),
        "violation_detected": _detected(name, viol, trials, seeds, True),
        "oracle_floor_detected": (_detected(name, o_low, trials, seeds, False)
                                  if o_low and math.isfinite(o_low) else None),  # fmt: skip
    }
    row["seconds"] = time.perf_counter() - t0
    return row


def summary(rows: list[dict[str, Any]]) -> str:
    """The table for docs/audit-bounds.md."""
    out = ["| mechanism (certified 1) | trials | reported floor | detected at it | violation floor | "
           "violated at it | oracle floor (before) | detected at it |",
           "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        s = r["seeds"]

        def pct(k: int | None, s: int = s) -> str:
            return "—" if k is None else f"{100 * k / s:.1f} % ({k}/{s})"

        out.append(f"| {r['mechanism']} | {r['trials']} | {r['floor']:.4g} | {pct(r['floor_detected'])} | "
                   f"{r['violation_floor']:.4g} | {pct(r['violation_detected'])} | {r['oracle_floor']:.4g} | "
                   f"{pct(r['oracle_floor_detected'])} |")  # fmt: skip
    return "\n".join(out)


def sentence(rows: list[dict[str, Any]]) -> str:
    """The README's summary of the check."""
    rates = [100 * r[k] / r["seeds"] for r in rows for k in ("floor_detected", "violation_detected")]
    old = [100 * r["oracle_floor_detected"] / r["seeds"] for r in rows
           if r["oracle_floor_detected"] is not None]  # fmt: skip
    sizes = " and ".join(f"{t:,}" for t in sorted({r["trials"] for r in rows}))
    seeds = min(r["seeds"] for r in rows)
    return (f"{min(rates):.1f}–{max(rates):.1f} % of {seeds} seeds in {len(rates)} cells (Gaussian, Laplace, "
            f"randomised response; floor and violation floor; {sizes} trials), against "
            f"{min(old):.1f}–{max(old):.1f} % at the oracle floor reported before")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=400)
    ap.add_argument("--trials", type=int, nargs="+", default=[20_000])
    ap.add_argument("--only", nargs="+", choices=MECHANISMS, default=MECHANISMS)
    ap.add_argument("--json", type=Path, default=None, help="store the rows here")
    a = ap.parse_args(argv)
    if a.seeds < 1 or min(a.trials) < 1000:
        ap.error("--seeds must be >= 1 and --trials >= 1000")
    rows = []
    for trials in a.trials:
        for name in a.only:
            rows.append(check(name, trials, a.seeds))
            print(json.dumps(rows[-1]), flush=True)
    print(summary(rows))
    if a.json is not None:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
