"""dpaudit's accounting vs dp-accounting's PLD on the same events, then 10^6 heterogeneous
Gaussian releases against dp-accounting and Opacus.

Run: ``python benchmarks/bench_accounting.py`` (``--json`` for machine-readable output,
``--quick`` to time the third-party RDP accountants on a 10^4 prefix and extrapolate instead
of running them on all 10^6 events, ``--pld-prefixes 100 1000 10000`` to choose the
dp-accounting PLD prefixes, ``--n`` for the number of events, ``--cases-only`` for the first
table alone).

First table (:data:`CASES`): for each composition, dpaudit's time (``account(event,
methods=["pld"])``, which answers a Gaussian-only composition by the exact GDP formula, and
``account(event)`` with every method, as ``dpaudit epsilon`` prints) and its ε, then
dp-accounting's ``PLDAccountant`` (default discretisation 1e-4) on the *same* events — or, where
it cannot (its grid would need billions of points), on fewer steps, said in the row, and then
dpaudit is timed on those fewer steps too so that the ratio is always on identical events:

* Gaussian μ = 0.001 × 10^9 steps at δ = 1e-10 (dp-accounting can: ~25 s, 2.7 GB);
* Gaussian μ = 1 × 10^6 at δ = 1e-5 (dp-accounting on 10^3 steps: its loss grid spans ε ≈ 5·10^5
  at 10^6 steps, ~10^10 points);
* Laplace ε0 = 0.01 × 10^5 at δ = 1e-6;
* a heterogeneous mix: 10^3 Gaussian releases of μ = 0.03, 10^3 of μ = 0.01, then 10^3 Laplace
  releases of ε0 = 0.01, at δ = 1e-6 (no randomized response: dp-accounting's PLD takes it
  only under a replace relation and Laplace only under add/remove or "replace special", which
  for randomized response means a uniformly random replacement — not the same events).

Second table:

The workload is a DP-bandit regime: n = 10^6 Gaussian releases
with per-step μ_i ~ Uniform(0.02, 0.04) (around 0.03), all distinct, ε reported at
δ = 1e-6. Each dpaudit method is timed separately through ``account(event, methods=[m])``
(best of ``--repeats``). Third parties get the same per-step noise (σ_i = 1/μ_i):

* dp-accounting ``RdpAccountant`` on a ``ComposedDpEvent`` of n ``GaussianDpEvent``s;
* Opacus ``RDPAccountant`` with a history of n entries (σ_i, q = 1, 1 step);
* dp-accounting ``PLDAccountant`` on a ``ComposedDpEvent`` of the first m events only, for
  each prefix m: it composes every distinct Gaussian by FFT and cannot take 10^6 in
  reasonable time (10^3 events already take ~15 s here). Its 10^6 time is a *linear
  extrapolation* from the largest prefix (a lower bound: the composed support grows with m),
  and its ε is for the prefix, shown next to our exact GDP ε for the same prefix.

Times include building the third-party event objects (their API needs one object per step)
but not building our ``GaussianSequenceEvent`` (one array; its construction time is
printed separately).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpaudit.accounting import METHODS, account  # noqa: E402
from dpaudit.events import (  # noqa: E402
    ComposedEvent,
    GaussianEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    PrivacyEvent,
    RandomizedResponseEvent,
)

DELTA = 1e-6


def _timed(fn: Callable[[], float], repeats: int = 1) -> tuple[float, float]:
    best, value = math.inf, math.nan
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, float(value)


def _ours(event: GaussianSequenceEvent, method: str) -> float:
    return account(event, delta=DELTA, methods=[method]).bounds[method].value


def _dp_rdp(mus: np.ndarray) -> float:
    import dp_accounting
    from dp_accounting import rdp as dp_rdp

    acc = dp_rdp.RdpAccountant()
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(1.0 / m) for m in mus]))
    return acc.get_epsilon(DELTA)


def _opacus_rdp(mus: np.ndarray) -> float:
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    acc.history = [(1.0 / m, 1.0, 1) for m in mus.tolist()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return acc.get_epsilon(DELTA)


def _dp_pld(mus: np.ndarray) -> float:
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant()
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(1.0 / m) for m in mus]))
    return acc.get_epsilon(DELTA)


# (name, delta, [(kind, parameter, steps)], steps dp-accounting can take (None: all), why not all)
CASES: list[tuple[str, float, list[tuple[str, float, int]], int | None, str]] = [
    ("Gaussian mu=0.001 x 1e9", 1e-10, [("gaussian", 0.001, 10**9)], None, ""),
    ("Gaussian mu=1 x 1e6", 1e-5, [("gaussian", 1.0, 10**6)], 10**3,
     "dp-accounting on 1e3 steps: at 1e6 its loss grid (1e-4 apart) would span eps ~ 5e5"),
    ("Laplace eps0=0.01 x 1e5", 1e-6, [("laplace", 0.01, 10**5)], None, ""),
    ("mix: 1e3 Gauss 0.03 + 1e3 Gauss 0.01 + 1e3 Lap 0.01", 1e-6,
     [("gaussian", 0.03, 1000), ("gaussian", 0.01, 1000), ("laplace", 0.01, 1000)], None, ""),
]  # fmt: skip


def _ours_event(parts: list[tuple[str, float, int]], scale: float = 1.0) -> PrivacyEvent:
    """dpaudit's event for ``parts`` (each part's steps times ``scale``)."""
    evs: list[PrivacyEvent] = []
    for kind, p, steps in parts:
        if kind == "gaussian":
            one: PrivacyEvent = GaussianEvent.from_mu(p)
        elif kind == "laplace":
            one = LaplaceEvent.from_epsilon(p)
        else:
            one = RandomizedResponseEvent(epsilon=p)
        evs.append(one.repeat(max(1, int(steps * scale))))
    return evs[0] if len(evs) == 1 else ComposedEvent(tuple(evs))


def _dp_event(parts: list[tuple[str, float, int]], scale: float = 1.0) -> Any:
    """The same events as dp-accounting ``DpEvent``s."""
    import dp_accounting

    evs = []
    for kind, p, steps in parts:
        if kind == "gaussian":
            one = dp_accounting.GaussianDpEvent(1.0 / p)
        elif kind == "laplace":
            one = dp_accounting.LaplaceDpEvent(1.0 / p)
        else:  # binary randomized response: uniform with probability p = 2 / (1 + e^eps)
            one = dp_accounting.RandomizedResponseDpEvent(2.0 / (1.0 + math.exp(p)), 2)
        evs.append(dp_accounting.SelfComposedDpEvent(one, max(1, int(steps * scale))))
    return evs[0] if len(evs) == 1 else dp_accounting.ComposedDpEvent(evs)


def _dp_pld_epsilon(event: Any, delta: float) -> float:
    from dp_accounting.pld import PLDAccountant

    acc = PLDAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


def compare_pld(repeats: int) -> list[dict[str, Any]]:
    """The first table (module docstring): one row per case of :data:`CASES`."""
    _dp_pld_epsilon(_dp_event([("gaussian", 1.0, 1)]), 1e-5)  # warm up: imports
    account(GaussianEvent.from_mu(1.0), delta=1e-5)
    from functools import partial

    def pld(event: PrivacyEvent, delta: float) -> float:
        return account(event, delta=delta, methods=["pld"]).bounds["pld"].value

    def best(event: PrivacyEvent, delta: float) -> float:
        return account(event, delta=delta).best.value

    def theirs(parts: list[tuple[str, float, int]], scale: float, delta: float) -> float:
        return _dp_pld_epsilon(_dp_event(parts, scale), delta)

    rows = []
    for name, delta, parts, dp_steps, why in CASES:
        total = sum(k for _, _, k in parts)
        full = _ours_event(parts)
        secs_pld, eps_pld = _timed(partial(pld, full, delta), repeats)
        secs_all, eps_best = _timed(partial(best, full, delta), repeats)
        scale = 1.0 if dp_steps is None else dp_steps / total
        if dp_steps is None:
            ours_same_secs, ours_same_eps = secs_pld, eps_pld
        else:
            ours_same_secs, ours_same_eps = _timed(partial(pld, _ours_event(parts, scale), delta), repeats)
        dp_secs, dp_eps = _timed(partial(theirs, parts, scale, delta))
        rows.append({
            "case": name, "delta": delta, "steps": total,
            "ours_pld_seconds": secs_pld, "ours_pld_epsilon": eps_pld,
            "ours_all_methods_seconds": secs_all, "ours_best_epsilon": eps_best,
            "dp_steps": total if dp_steps is None else dp_steps,
            "ours_same_seconds": ours_same_secs, "ours_same_epsilon": ours_same_eps,
            "dp_pld_seconds": dp_secs, "dp_pld_epsilon": dp_eps,
            "ratio": dp_secs / ours_same_secs, "note": why,
        })  # fmt: skip
    return rows


def _print_pld(rows: list[dict[str, Any]]) -> None:
    print("dpaudit vs dp-accounting PLDAccountant (value_discretization_interval 1e-4) on the same events")
    print(f"{'case':<50} {'delta':>7} {'steps':>10} {'ours s':>8} {'ours eps':>14} {'dp-acc s':>9} "
          f"{'dp-acc eps':>14} {'ratio':>9}")  # fmt: skip
    for r in rows:
        print(f"{r['case']:<50} {r['delta']:>7.0e} {r['dp_steps']:>10.3g} {r['ours_same_seconds']:>8.4f} "
              f"{r['ours_same_epsilon']:>14.6f} {r['dp_pld_seconds']:>9.3f} {r['dp_pld_epsilon']:>14.6f} "
              f"{r['ratio']:>8.0f}x")  # fmt: skip
    print("ours = dpaudit account(..., methods=['pld']) (exact GDP when Gaussian-only); "
          "ratio = dp-accounting time / ours")  # fmt: skip
    for r in rows:
        if r["note"] or r["dp_steps"] != r["steps"]:
            print(f"  {r['case']}: {r['note']}; dpaudit on all {r['steps']:.3g} steps: pld "
                  f"{r['ours_pld_epsilon']:.6f} in {r['ours_pld_seconds']:.4f} s")  # fmt: skip
    for r in rows:
        print(f"  {r['case']}: every dpaudit method (as 'dpaudit epsilon' prints) in "
              f"{r['ours_all_methods_seconds']:.3f} s, best eps {r['ours_best_epsilon']:.6f}")  # fmt: skip
    print()


def run(n: int, repeats: int, quick: bool, pld_prefixes: list[int], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    mus = rng.uniform(0.02, 0.04, n)
    t0 = time.perf_counter()
    event = GaussianSequenceEvent(mus)
    build = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    for m in METHODS:
        secs, eps = _timed(lambda m=m: _ours(event, m), repeats)
        rows.append({"method": f"dpaudit {m}", "seconds": secs, "epsilon": eps, "events": n, "note": ""})

    third = [("dp-accounting RDP", _dp_rdp), ("opacus RDP", _opacus_rdp)]
    for _, fn in [*third, ("pld", _dp_pld)]:  # warm up: imports and first-call caches
        fn(mus[:10])
    for name, fn in third:
        if quick and n > 10**4:
            m = 10**4
            secs, _ = _timed(lambda fn=fn, m=m: fn(mus[:m]))
            rows.append(
                {
                    "method": name,
                    "seconds": secs * n / m,
                    "epsilon": math.nan,
                    "events": m,
                    "note": f"timed on {m} events, extrapolated linearly to {n}",
                }
            )
        else:
            secs, eps = _timed(lambda fn=fn: fn(mus))
            rows.append({"method": name, "seconds": secs, "epsilon": eps, "events": n, "note": ""})

    for m in sorted(p for p in pld_prefixes if p <= n):
        secs, eps = _timed(lambda m=m: _dp_pld(mus[:m]))
        ours_prefix = _ours(GaussianSequenceEvent(mus[:m]), "gdp")
        rows.append(
            {
                "method": f"dp-accounting PLD ({m} events)",
                "seconds": secs,
                "epsilon": eps,
                "events": m,
                "note": f"ε for the {m}-event prefix (dpaudit gdp on it: {ours_prefix:.6f})",
            }
        )
    if pld_prefixes:
        m = max(p for p in pld_prefixes if p <= n)
        last = next(r for r in rows if r["method"] == f"dp-accounting PLD ({m} events)")
        rows.append(
            {
                "method": "dp-accounting PLD (extrapolated)",
                "seconds": last["seconds"] * n / m,
                "epsilon": math.nan,
                "events": n,
                "note": f"linear extrapolation from {m} events (a lower bound)",
            }
        )

    gdp_secs = next(r["seconds"] for r in rows if r["method"] == "dpaudit gdp")
    for r in rows:
        r["ratio_vs_gdp"] = r["seconds"] / gdp_secs
    return {"n": n, "delta": DELTA, "mu_total": event.mu, "event_build_seconds": build, "rows": rows}


def _print_table(result: dict[str, Any]) -> None:
    print(
        f"n = {result['n']} Gaussian releases, mu_i ~ U(0.02, 0.04), total mu = {result['mu_total']:.6f}, "
        f"delta = {result['delta']:g}; GaussianSequenceEvent built in {result['event_build_seconds']:.3f} s"
    )
    print(f"{'method':<36} {'seconds':>10} {'epsilon':>12} {'x gdp':>10}  note")
    for r in result["rows"]:
        eps = "-" if math.isnan(r["epsilon"]) else f"{r['epsilon']:.6f}"
        print(f"{r['method']:<36} {r['seconds']:>10.3f} {eps:>12} {r['ratio_vs_gdp']:>10.1f}  {r['note']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeats", type=int, default=3, help="timing repeats for dpaudit (minimum reported)")
    ap.add_argument(
        "--quick", action="store_true", help="time third-party RDP on 10^4 events and extrapolate"
    )
    ap.add_argument("--pld-prefixes", type=int, nargs="*", default=[100, 1000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--cases-only", action="store_true", help="only the table against dp-accounting's PLD")
    args = ap.parse_args(argv)
    cases = compare_pld(args.repeats)
    if not args.json:
        _print_pld(cases)
        sys.stdout.flush()
    result = {} if args.cases_only else run(args.n, args.repeats, args.quick, args.pld_prefixes, args.seed)
    if args.json:
        print(json.dumps({"pld_cases": cases, **result}, indent=2, default=float))
    elif result:
        _print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
