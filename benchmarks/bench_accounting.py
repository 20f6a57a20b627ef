"""Composing 10^6 heterogeneous Gaussian releases: dpaudit vs dp-accounting vs Opacus.

Run: ``python benchmarks/bench_accounting.py`` (``--json`` for machine-readable output,
``--quick`` to time the third-party RDP accountants on a 10^4 prefix and extrapolate instead
of running them on all 10^6 events, ``--pld-prefixes 100 1000 10000`` to choose the
dp-accounting PLD prefixes, ``--n`` for the number of events).

The workload is the DP-bandit regime of anchors-accounting §4: n = 10^6 Gaussian releases
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
from dpaudit.events import GaussianSequenceEvent  # noqa: E402

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
    args = ap.parse_args(argv)
    result = run(args.n, args.repeats, args.quick, args.pld_prefixes, args.seed)
    if args.json:
        print(json.dumps(result, indent=2, default=float))
    else:
        _print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
