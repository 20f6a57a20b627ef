"""Check the floors measured on mechanism components by planting the bug they describe.

A component whose audit calls ``run_audit`` on a mechanism (the semi-bandit randomizers) has its
floor measured on that mechanism with its noise scaled by 1/L (:mod:`bandits.auditing.mechanism_floor`);
a cascade audit has its floor measured by replicating itself on the noise-scaled agent
(:mod:`bandits.auditing.replicated_floor`). Each measurement reports the leak factors at which
the component, as it runs, detects (a positive bound) and refutes the certificate half of the
time. This takes the floor of each component of a default ``dpaudit run ALG`` (kept with the
package, or measured), plants exactly that bug in the running code — the mechanism class's
``sample`` drawing its noise at 1/L of its scale, or the agent's privacy stream scaled by 1/L
(:mod:`benchmarks.planted_bug_tools`) — and runs the component's own audit on ``--seeds`` fresh
audit seeds: the share that detects at the detection factor, and that refutes at the violation
factor, should be about 50 % (and more at 1.1 times it).

    python benchmarks/bench_mechanism_floor.py --seeds 100 --json docs/img/mechanism_floor.json
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

from bandits.auditing.claims import DEFAULT_MECHANISM_TRIALS  # noqa: E402
from bandits.auditing.contract import AuditSettings  # noqa: E402
from bandits.auditing.mechanism_floor import ScaledDraws  # noqa: E402
from bandits.auditing.views import VIEWS  # noqa: E402
from bandits.registry import get  # noqa: E402
from benchmarks.planted_bug_tools import method_edit, scaled_stream  # noqa: E402
from dpaudit.audit.runner import run_audit  # noqa: E402

COMMAND = "python benchmarks/bench_mechanism_floor.py"

CASES = (("cucb-ldp1", "mechanism"), ("cucb-ldp2", "mechanism"), ("cascade-ldp-laplace-sound", "outputs"),
         ("cascade-ldp-gaussian-sound", "outputs"))  # fmt: skip
"""(algorithm, component) pairs checked by default: those whose single audit costs under a second."""

ABOVE = 1.1
"""The violation check is also run at this multiple of the measured violation factor."""


def _setup(key: str) -> tuple[Any, Any, Any, int, AuditSettings]:
    spec = get(key)
    env = spec.env_parser(spec.default_env)
    policy = spec.configure({}, env, spec.default_horizon).policy
    Ta = spec.default_audit_horizon(policy, spec.default_horizon, env.n_arms)
    conf = 1.0 - 0.05 / VIEWS  # each view of a default run (the component's auditor is one of them)
    return spec, policy, env, Ta, AuditSettings(spec.default_audit_trials, 0, conf, 1e-6)


def _scaled_sample(factor: float) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(sample: Callable[..., Any]) -> Callable[..., Any]:
        def scaled(self: Any, x: Any, rng: Any, size: Any = None) -> Any:
            return sample(self, x, ScaledDraws(rng.bit_generator, factor), size)

        return scaled

    return wrap


def _component(key: str, part: str) -> tuple[dict[str, Any], Callable[[int], Any], Callable[[float], Any]]:
    """The component's measured floor in the default run, its audit as a function of the audit
    seed, and the plant of the bug "noise x 1/L" as a function of the factor."""
    spec, policy, env, Ta, settings = _setup(key)
    audit = spec.auditor(policy, Ta, env, settings)
    report = audit.primary if part in ("outputs", "mechanism") else audit.components[part]
    floor = report.details.get("algorithm_floor")
    if floor is None:
        audit = spec.auditor(policy, Ta, env, replace(settings, floor="algorithm"))
        report = audit.primary if part in ("outputs", "mechanism") else audit.components[part]
        floor = report.details["algorithm_floor"]
    if part == "mechanism":
        from bandits.semibandits.audit import ldp_target

        target = ldp_target(policy, env, delta=settings.delta)
        conf = settings.shared(2).confidence

        def one(seed: int) -> Any:
            return run_audit(target, trials=DEFAULT_MECHANISM_TRIALS, seed=seed, confidence=conf,
                             batch_size=1 << 14)  # fmt: skip

        owner = type(target.mechanism)
        return floor, one, lambda f: method_edit(owner, "sample", _scaled_sample(f))()

    def whole(seed: int) -> Any:
        return spec.auditor(policy, Ta, env, replace(settings, seed=seed, floor="reference")).primary

    return floor, whole, lambda f: scaled_stream(type(policy), f, policy.privacy_stream)()


def check(key: str, part: str, seeds: int) -> dict[str, Any]:
    """The measured floor of one component and the audits of its planted bugs."""
    t0 = time.perf_counter()
    floor, one, plant = _component(key, part)
    q, cert = floor["quantity"], floor["certified"]
    out: dict[str, Any] = {"algorithm": key, "component": part, "quantity": q, "certified": cert,
                           "floor": floor}  # fmt: skip
    runs, t1 = 0, time.perf_counter()
    checks = (("detected", floor["detect_leak"], 1.0), ("violated", floor["violate_leak"], 1.0),
              ("violated_above", floor["violate_leak"], ABOVE))  # fmt: skip
    for what, leak, factor in checks:
        if leak is None:
            out[what] = None
            continue
        hits = 0
        with plant(1.0 / (leak * factor)):
            for s in range(1, seeds + 1):
                rep = one(s)
                bound = rep.empirical.mu_lower if q == "mu" else rep.empirical.epsilon_lower
                hits += (float(bound or 0.0) > 0.0) if what == "detected" else (float(bound or 0.0) > cert)
        runs += seeds
        out[what] = {"leak": leak * factor, "hits": hits, "seeds": seeds}
    out["audit_seconds"] = (time.perf_counter() - t1) / max(1, runs)
    out["seconds"] = time.perf_counter() - t0
    return out


def _cell(c: dict[str, Any] | None) -> str:
    if c is None:
        return "n/a"
    return f"L = {c['leak']:.3g}: {100 * c['hits'] / c['seeds']:.1f} % of {c['seeds']}"


def _label(row: dict[str, Any], primaries: dict[str, str]) -> str:
    """The component as the floors table and the run's floor note name it: a primary ("outputs",
    "mechanism") by its view (``primaries``: algorithm → name), any other by its name."""
    part = row["component"]
    return primaries.get(row["algorithm"], part) if part in ("outputs", "mechanism") else part


def table(rows: list[dict[str, Any]], primaries: dict[str, str] | None = None) -> str:
    """The table for docs/audit-bounds.md (from the stored rows; each primary named as in
    ``primaries``, :func:`benchmarks.bench_default_floors.primary_names`)."""
    head = ("| algorithm | component | certificate | family | detected at the measured L "
            f"| violation caught at the measured L | violation caught at {ABOVE:g} x that L | one audit |\n"
            "|---|---|---|---|---|---|---|---|")  # fmt: skip
    lines = [head]
    for r in rows:
        own = "audited mechanism" in r["floor"]["family"]
        fam = "mechanism's noise" if own else "agent's noise, whole audit"
        cert = f"{r['quantity']} {r['certified']:.4g}"
        name = _label(r, primaries or {})
        lines.append(f"| {r['algorithm']} | {name} | {cert} | {fam} | {_cell(r['detected'])} | "
                     f"{_cell(r['violated'])} | {_cell(r['violated_above'])} | "
                     f"{r['audit_seconds']:.2f} s |")  # fmt: skip
    return "\n".join(lines)


def sentence(rows: list[dict[str, Any]], primaries: dict[str, str] | None = None) -> str:
    """The README's summary of the check (components named as in :func:`table`)."""

    def pct(what: str) -> list[float]:
        return [100 * r[what]["hits"] / r[what]["seeds"] for r in rows if r.get(what)]

    def span(v: list[float]) -> str:
        return f"{min(v):.0f}–{max(v):.0f} %" if v else "n/a"

    names = ", ".join(f"{r['algorithm']} ({_label(r, primaries or {})})" for r in rows)
    seeds = min(r[w]["seeds"] for r in rows for w in ("detected", "violated") if r.get(w))
    return (f"on {names} ({seeds} audit seeds each, the bug planted in the running code) the component's "
            f"audit detects in {span(pct('detected'))} at the measured detection factor and refutes in "
            f"{span(pct('violated'))} at the measured violation factor, {span(pct('violated_above'))} at "
            f"{ABOVE:g} times it")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", default=[f"{a}:{p}" for a, p in CASES],
                    help="ALGORITHM:COMPONENT pairs (component: mechanism, outputs or a component's name)")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    rows = []
    for case in args.cases:
        key, _, part = case.partition(":")
        rows.append(check(key, part or "outputs", args.seeds))
        print(f"{case} done ({rows[-1]['seconds']:.0f} s)", file=sys.stderr, flush=True)
    if args.json is not None:
        cmd = f"{COMMAND} --seeds {args.seeds} --json {args.json}"
        args.json.write_text(json.dumps({"command": cmd, "rows": rows}, indent=1) + "\n")
    print(table(rows))
    print()
    print(sentence(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
