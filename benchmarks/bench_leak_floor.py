"""Check the algorithm floor of an algorithm's outputs audit by running that audit on its bugs.

For each algorithm, the outputs audit of ``dpaudit run ALG`` (its own auditor, default
environment, audit horizon and trials, at the 97.5 % of one of the two views) is run once with
``floor="algorithm"`` (:mod:`bandits.auditing.leak_floor`), which reports the leak factors L at
which the audit should detect the algorithm (a positive bound) and refute its certificate, each
half of the time. Then the real code is bugged exactly that way — every privacy noise draw scaled
by 1/L, planted as the planted-bug table plants "noise x1/2" (:mod:`benchmarks.planted_bug_tools`)
— and the same audit runs on ``--seeds`` fresh audit seeds: the share that detects (at the
detection L) and that refutes (at the violation L) should be about 50 %. The reference floor the
audit reports by default (a single oracle test on the Gaussian or canonical (ε, δ) pair) is
shown beside it, as a leak factor: floor / certificate.

    python benchmarks/bench_leak_floor.py --algorithms lazy-ucb adap-ucb rnm-ftnl --seeds 200 \\
        --json docs/img/leak_floor.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bandits.auditing.contract import AuditSettings  # noqa: E402
from bandits.auditing.releases import audit_releases  # noqa: E402
from bandits.auditing.views import VIEWS  # noqa: E402
from bandits.environments import parse_env  # noqa: E402
from bandits.registry import get  # noqa: E402
from benchmarks.planted_bug_tools import scaled_stream  # noqa: E402
from dpaudit.audit.power import floor_report  # noqa: E402

COMMAND = "python benchmarks/bench_leak_floor.py"

ABOVE = 1.1
"""The violation check is also run at this multiple of the measured violation factor."""


def _setup(key: str) -> tuple[Any, Any, Any, int, AuditSettings]:
    spec = get(key)
    env = spec.env_parser(spec.default_env) if spec.env_parser is not None else parse_env(spec.default_env)
    T = spec.default_horizon
    policy = spec.configure({}, env, T).policy
    Ta = spec.default_audit_horizon(policy, T, env.n_arms) if spec.default_audit_horizon else T
    conf = 1.0 - 0.05 / VIEWS
    return spec, policy, env, Ta, AuditSettings(spec.default_audit_trials, 0, conf, 1e-6, floor="algorithm")


def _bound(report: Any, quantity: str) -> float:
    emp = report.empirical
    return float(emp.mu_lower if quantity == "mu" else emp.epsilon_lower)


def _view(key: str, view: str) -> tuple[Callable[[AuditSettings], Any], Any, AuditSettings, int]:
    """The audit of one view of ``key``'s default run as a function of its settings (the report
    whose floor is measured), the policy, the settings and the audit horizon."""
    spec, policy, env, Ta, settings = _setup(key)
    if view == "outputs":
        return (lambda s: spec.auditor(policy, Ta, env, s).primary), policy, settings, Ta
    if key == "ts":  # its own auditor runs both views (at the family-wise level); the releases are its draws
        def draws(s: AuditSettings) -> Any:
            return spec.auditor(policy, Ta, env, replace(s, confidence=1.0 - (1.0 - s.confidence) * VIEWS))

        return (lambda s: draws(s).components["releases"]), policy, settings, Ta
    design = policy.release_audit(Ta, env.n_arms)
    return (lambda s: audit_releases(policy, Ta, env, s, design=design)), policy, settings, Ta


def check(key: str, seeds: int, view: str = "outputs") -> dict[str, Any]:
    """The algorithm floor of one view of ``key``'s audit and the audits of its noise-scaled bugs."""
    audit_view, policy, settings, Ta = _view(key, view)
    t0 = time.perf_counter()
    first = audit_view(settings)
    cal = first.details.get("algorithm_floor")
    if cal is None:
        raise SystemExit(f"{key}: its {view} audit computes no algorithm floor")
    floor_s = first.details["seconds"]["floor"]
    alpha = (1.0 - settings.confidence) / 2.0
    ref = floor_report(settings.trials, settings.trials, alpha, delta=settings.delta,
                       certified_mu=cal["certified"] if cal["quantity"] == "mu" else None,
                       certified_epsilon=None if cal["quantity"] == "mu" else cal["certified"])  # fmt: skip
    q, cert = cal["quantity"], cal["certified"]
    ref_floor = ref.mu if q == "mu" else ref.epsilon
    ref_violation = ref.mu_violation if q == "mu" else ref.epsilon_violation
    out: dict[str, Any] = {
        "algorithm": key, "view": view, "quantity": q, "certified": cert, "trials": settings.trials,
        "horizon": Ta,
        "floor": cal, "floor_seconds": floor_s,
        "reference_detect_leak": None if ref_floor is None else ref_floor / cert,
        "reference_violate_leak": None if ref_violation is None else ref_violation / cert,
    }  # fmt: skip
    plain = replace(settings, floor="reference")
    t1 = time.perf_counter()
    checks = [("detected", cal["detect_leak"], 1.0), ("violated", cal["violate_leak"], 1.0),
              ("violated_above", cal["violate_leak"], ABOVE)]  # fmt: skip
    runs = 0
    for what, leak, factor in checks:
        if leak is None:
            out[what] = None
            continue
        hits = 0
        with scaled_stream(type(policy), 1.0 / (leak * factor), policy.privacy_stream)():
            for s in range(1, seeds + 1):
                rep = audit_view(replace(plain, seed=s))
                hits += (_bound(rep, q) > 0.0) if what == "detected" else (rep.verdict.value == "violated")
        runs += seeds
        out[what] = {"leak": leak * factor, "hits": hits, "seeds": seeds}
    out["audit_seconds"] = (time.perf_counter() - t1) / max(1, runs)
    out["seconds"] = time.perf_counter() - t0
    return out


def pool_spread(key: str, view: str, seeds: int) -> dict[str, Any]:
    """The algorithm floor of one view of ``key``'s audit measured with ``seeds`` audit seeds (so
    ``seeds`` independent pools of the variants' runs): how far one pool's factors scatter."""
    audit_view, _, settings, _ = _view(key, view)
    floors = [audit_view(replace(settings, seed=s)).details["algorithm_floor"] for s in range(seeds)]
    return {"algorithm": key, "view": view, "seeds": seeds,
            "detect_leak": [f["detect_leak"] for f in floors],
            "violate_leak": [f["violate_leak"] for f in floors]}  # fmt: skip


def spread_sentence(spread: dict[str, Any]) -> str:
    """The scatter of one pool's factors, for docs/audit-bounds.md."""
    d = [v for v in spread["detect_leak"] if v is not None]
    v = [x for x in spread["violate_leak"] if x is not None]
    return (f"{spread['algorithm']}'s {spread['view']} view, {spread['seeds']} audit seeds: detection factor "
            f"{min(d):.3g}–{max(d):.3g}, violation factor {min(v):.3g}–{max(v):.3g}")  # fmt: skip


def _row(r: dict[str, Any]) -> str:
    def cell(what: str) -> str:
        c = r[what]
        if c is None or not c["seeds"]:
            return "n/a" if c is None else f"L = {c['leak']:.3g}"
        return f"L = {c['leak']:.3g}: {100 * c['hits'] / c['seeds']:.1f} % of {c['seeds']}"

    def ref(v: float | None) -> str:
        return "-" if v is None else f"{v:.3g}"

    return (f"| {r['algorithm']} | {r['view']} | {r['quantity']} {r['certified']:.4g} | {cell('detected')} | "
            f"{cell('violated')} | {cell('violated_above')} | "
            f"{ref(r['reference_detect_leak'])} / {ref(r['reference_violate_leak'])} | "
            f"{r['floor_seconds']:.1f} s / {r['audit_seconds']:.2f} s |")  # fmt: skip


HEADER = ("| algorithm | view | certificate | detected at the measured L "
          "| violation caught at the measured L "
          f"| violation caught at {ABOVE:g} x that L | reference floor as L (detect / violate) "
          "| floor / one audit |\n|---|---|---|---|---|---|---|---|")


def table(rows: list[dict[str, Any]]) -> str:
    """The table for docs/audit-bounds.md (from the stored rows)."""
    return "\n".join([HEADER, *(_row(r) for r in rows)])


def sentence(rows: list[dict[str, Any]]) -> str:
    """The README's summary of the check."""

    def pct(what: str) -> list[float]:
        return [100 * r[what]["hits"] / r[what]["seeds"] for r in rows if r.get(what) and r[what]["seeds"]]

    def span(v: list[float]) -> str:
        return f"{min(v):.0f}–{max(v):.0f} %" if v else "n/a"

    ratio = [r["floor"]["detect_leak"] / r["reference_detect_leak"] for r in rows
             if r["floor"]["detect_leak"] and r["reference_detect_leak"]]  # fmt: skip
    algs = ", ".join(dict.fromkeys(r["algorithm"] for r in rows))
    seeds = min(r["detected"]["seeds"] for r in rows if r.get("detected"))
    return (f"on {algs} ({len(rows)} views, {seeds} audit seeds each) the bugged audit detects in "
            f"{span(pct('detected'))} at the measured detection factor and refutes in "
            f"{span(pct('violated'))} at the measured violation factor, {span(pct('violated_above'))} at 1.1 "
            f"times it; the reference floor, read as a leak factor, is {min(ratio):.1f}–{max(ratio):.1f} "
            "times lower for detection")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", nargs="+", default=["lazy-ucb", "adap-ucb", "rnm-ftnl"])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--views", nargs="+", choices=("outputs", "releases"), default=["outputs", "releases"])
    ap.add_argument("--pool-seeds", type=int, default=0,
                    help="instead of the check: measure the floor of the first algorithm's first view "
                         "with this many audit seeds (independent pools) and show their scatter")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.pool_seeds:
        spread = pool_spread(args.algorithms[0], args.views[0], args.pool_seeds)
        print(spread_sentence(spread))
        if args.json is not None:
            cmd = (f"{COMMAND} --algorithms {args.algorithms[0]} --views {args.views[0]} "
                   f"--pool-seeds {args.pool_seeds} --json {args.json}")
            args.json.write_text(json.dumps({"command": cmd, "spread": spread}, indent=1) + "\n",
                                 encoding="utf-8")
        return 0
    rows = []
    print(HEADER)
    for key in args.algorithms:
        for view in args.views:
            r = check(key, args.seeds, view)
            rows.append(r)
            print(_row(r), flush=True)
    if args.json is not None:
        cmd = (f"{COMMAND} --algorithms {' '.join(args.algorithms)} --views {' '.join(args.views)} "
               f"--seeds {args.seeds} --json {args.json}")
        args.json.write_text(json.dumps({"command": cmd, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
