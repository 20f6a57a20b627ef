"""The tables and sentences of docs/accounting-dpsgd.md and the README, rendered from the results
``python benchmarks/bench_dpsgd.py --repeat 2 --json docs/img/dpsgd.json`` stores (one row per cell:
``{"cell", "q", "sigma", "steps", "results": {peer: {...}}}``, one per fixed-size batch cell:
``{"fixed": [N, B, sigma, steps], "results": {...}}``).

>>> rows = [{"cell": 0, "q": 0.001, "sigma": 1.0, "steps": 1000, "results": {
...     "ours": {"eps": 0.5, "wall": 0.3, "mem_mib": 9}, "ours_pld": {"eps": 0.5, "wall": 0.2, "mem_mib": 9},
...     "dpa_pld": {"eps": 0.5, "wall": 0.4, "mem_mib": 7}, "dpa_pld_low": {"eps": 0.4}}}]
>>> speed(rows, "ours_pld")["slower"], speed(rows, "ours_pld")["below"]
([], [])
"""

from __future__ import annotations

import math
from typing import Any

from dpaudit.formatting import fmt_up

__all__ = ["speed", "prv_inconsistent", "summary", "cells_table", "prv_table", "fixed_table",
           "readme_sentence", "calibration_table", "calibration_sentence", "incremental_table",
           "incremental_sentence"]


def _k(steps: int) -> str:
    return f"10{str(round(math.log10(steps))).translate(str.maketrans('0123456789', '⁰¹²³⁴⁵⁶⁷⁸⁹'))}"


def _eps(r: dict[str, Any] | None, key: str = "eps") -> str:
    return "—" if not r or r.get(key) is None else f"{r[key]:.6f}"


def _t(r: dict[str, Any] | None) -> str:
    return "—" if not r or r.get("wall") is None or r.get("eps") is None else f"{r['wall']:.2f} s"


def _cells(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in results if "cell" in row]


def speed(results: list[dict[str, Any]], mine: str) -> dict[str, Any]:
    """ε ratios and time ratios (dp-accounting's PLD / ``mine``) over the cells where both answered,
    the cells where ``mine`` was slower, and those where it fell below a lower reference
    (dp-accounting's optimistic PLD, prv-accountant's lower bound)."""
    eps, times, slower, below = [], [], [], []
    for row in _cells(results):
        r = row["results"]
        o, d = r.get(mine, {}), r.get("dpa_pld", {})
        lows = [r.get("dpa_pld_low", {}).get("eps"), r.get("prv", {}).get("lower")]
        if lows[1] is not None and d.get("eps") is not None and lows[1] > d["eps"]:
            lows[1] = None  # above dp-accounting's pessimistic PLD: not a lower bound (see prv_inconsistent)
        if o.get("eps") is not None and any(lo is not None and o["eps"] < lo for lo in lows):
            below.append(row["cell"])
        if o.get("eps") is None or d.get("eps") is None:
            continue
        eps.append(o["eps"] / d["eps"])
        times.append(d["wall"] / o["wall"])
        if o["wall"] > d["wall"]:
            slower.append(row["cell"])
    ordered = sorted(times)
    return {"cells": len(eps), "eps": (min(eps), max(eps)) if eps else None,
            "eps_median": sorted(eps)[len(eps) // 2] if eps else None,
            "time": (ordered[0], ordered[-1]) if times else None,
            "time_median": ordered[len(ordered) // 2] if times else None, "slower": slower, "below": below}


def prv_inconsistent(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cells where prv-accountant's lower bound lies above dp-accounting's pessimistic PLD (an upper
    bound): there its lower bound is not one (its discretisation breaks down at large ε)."""
    out = []
    for row in _cells(results):
        r = row["results"]
        lo, up = r.get("prv", {}).get("lower"), r.get("dpa_pld", {}).get("eps")
        if lo is not None and up is not None and lo > up:
            out.append({"cell": row["cell"], "q": row["q"], "sigma": row["sigma"], "steps": row["steps"],
                        "prv_lower": lo, "dpa_pld": up, "ours": r.get("ours", {}).get("eps")})
    return out


def summary(results: list[dict[str, Any]], peers: list[str]) -> str:
    """One line per variant of ours: ε ratio range, time ratio range and median, slower cells."""
    lines = []
    for mine in [p for p in ("ours", "ours_pld") if p in peers]:
        s = speed(results, mine)
        if s["cells"]:
            (e0, e1), (t0, t1) = s["eps"], s["time"]
            lines.append(f"{mine} vs dpa_pld over {s['cells']} cells: eps ratio {e0:.5f}-{e1:.5f}; "
                         f"dp-accounting's time / ours {t0:.2f}-{t1:.2f}x (median {s['time_median']:.2f}x); "
                         f"slower in {len(s['slower'])} cells {s['slower']}; "
                         f"below a lower reference in {len(s['below'])} cells {s['below']}")
    return "\n".join(lines)


def cells_table(results: list[dict[str, Any]]) -> str:
    """The 36 Poisson-sampling cells: ε of each accountant, the ratio to dp-accounting's PLD, times
    and memory."""
    head = ("| q | σ | k | ε dpaudit | ε dp-acc. PLD | ratio | ε dp-acc. optimistic (lower) | ε dp-acc. RDP "
            "| ε Opacus RDP | time dpaudit PLD / best | time dp-acc. PLD | dp-acc. / dpaudit PLD time "
            "| memory dpaudit / dp-acc. PLD |\n" + "|---:" * 13 + "|")
    lines = [head]
    for row in _cells(results):
        r = row["results"]
        o, p, d = r.get("ours", {}), r.get("ours_pld", {}), r.get("dpa_pld", {})
        ratio = f"{o['eps'] / d['eps']:.5f}" if o.get("eps") and d.get("eps") else "—"
        t = f"{d['wall'] / p['wall']:.2f}" if p.get("wall") and d.get("wall") and d.get("eps") else "—"
        mem = f"{p.get('mem_mib', math.nan):.0f} / {d.get('mem_mib', math.nan):.0f} MiB"
        lines.append(
            f"| {row['q']:g} | {row['sigma']:g} | {_k(row['steps'])} | {fmt_up(o.get('eps'))} | {_eps(d)} "
            f"| {ratio} | {_eps(r.get('dpa_pld_low'))} | {_eps(r.get('dpa_rdp'))} "
            f"| {_eps(r.get('opacus_rdp'))} | {_t(p)} / {_t(o)} | {_t(d)} | {t} | {mem} |")
    return "\n".join(lines)


def prv_table(results: list[dict[str, Any]]) -> str:
    """The cells the PRV peers ran: their upper estimates (and prv-accountant's lower bound) against
    ours, and their times."""
    lines = ["| q | σ | k | ε dpaudit | prv-accountant lower / upper | Opacus PRV | time dpaudit PLD "
             "| prv-accountant | Opacus PRV |\n" + "|---:" * 9 + "|"]
    for row in _cells(results):
        r = row["results"]
        if "prv" not in r and "opacus_prv" not in r:
            continue
        o, p, v, op = r.get("ours", {}), r.get("ours_pld", {}), r.get("prv", {}), r.get("opacus_prv", {})
        lines.append(f"| {row['q']:g} | {row['sigma']:g} | {_k(row['steps'])} | {fmt_up(o.get('eps'))} "
                     f"| {_eps(v, 'lower')} / {_eps(v)} | {_eps(op)} | {_t(p)} | {_t(v)} | {_t(op)} |")
    return "\n".join(lines)


def fixed_table(results: list[dict[str, Any]]) -> str:
    """Fixed-size batches (sampling without replacement, replace-one) against dp-accounting's RDP."""
    lines = ["| N | B | σ | k | ε dpaudit (rdp) | ε dp-accounting (rdp) | ratio "
             "| time dpaudit / dp-accounting |\n" + "|---:" * 8 + "|"]
    for row in results:
        if "fixed" not in row:
            continue
        n, b, s, k = row["fixed"]
        o, d = row["results"].get("ours_wor", {}), row["results"].get("dpa_wor", {})
        ratio = f"{o['eps'] / d['eps']:.4f}" if o.get("eps") and d.get("eps") else "—"
        lines.append(f"| {n} | {b} | {s:g} | {k} | {fmt_up(o.get('eps'))} | {_eps(d)} | {ratio} "
                     f"| {_t(o)} / {_t(d)} |")
    return "\n".join(lines)


def readme_sentence(results: list[dict[str, Any]]) -> str:
    """What the README's benchmark row says, from the stored results."""
    pld, best = speed(results, "ours_pld"), speed(results, "ours")
    (e0, e1), (t0, t1), n = pld["eps"], pld["time"], pld["cells"]
    return (f"ε / dp-accounting's PLD {e0:.5f}–{e1:.5f} (median {pld['eps_median']:.5f}), below a lower "
            f"reference in {len(pld['below'])} of {n} cells; dp-accounting's PLD time / ours (PLD) "
            f"{t0:.2f}–{t1:.1f}× (median {pld['time_median']:.2f}×), slower in {len(pld['slower'])} of {n} "
            f"cells; with RDP beside it (`best`) slower in {len(best['slower'])} cells")


# ---------------------------------------------------------------------------------------
# calibration and the incremental accountant (``python benchmarks/bench_calibration.py --json
# docs/img/calibration.json``)

_CAL_PEERS = ("dp-accounting pld", "dp-accounting rdp", "opacus prv", "opacus rdp")


def _sigma(r: dict[str, Any] | None, certified: bool = True) -> str:
    if not r or r.get("sigma") is None:
        return "—"
    return f"{r['sigma']:.6f} ({fmt_up(r['certified'])})" if certified else f"{r['sigma']:.6f}"


def calibration_table(data: dict[str, Any]) -> str:
    """σ for each target from each library, with dpaudit's certified ε at that σ, and the times."""
    lines = ["| q, k, target (ε, δ) | dpaudit σ (certified ε) | dp-acc. PLD σ (our certified ε) "
             "| dp-acc. RDP σ | Opacus PRV σ (our cert.) | Opacus RDP σ "
             "| time: dpaudit / dp-acc. PLD / Opacus PRV |\n"
             "|---|---|---|---|---|---|---|"]
    for row in data["calibration"]:
        o, d, op = row["ours"], row.get("dp-accounting pld", {}), row.get("opacus prv", {})
        times = " / ".join("—" if r.get("seconds") is None else f"{r['seconds']:.1f}" for r in (o, d, op))
        q = "256/60000" if abs(row["q"] - 256 / 60000) < 1e-12 else f"{row['q']:g}"
        lines.append(f"| {q}, {row['steps']}, ({row['target']:g}, {row['delta']:g}) | {_sigma(o)} "
                     f"| {_sigma(d)} | {_sigma(row.get('dp-accounting rdp'), False)} | {_sigma(op)} "
                     f"| {_sigma(row.get('opacus rdp'), False)} | {times} s |")
    return "\n".join(lines)


def calibration_sentence(data: dict[str, Any]) -> str:
    """Speed against dp-accounting's PLD calibration, agreement, and that every σ certifies."""
    rows = data["calibration"]
    both = [r for r in rows if r.get("dp-accounting pld", {}).get("sigma") is not None]
    speed = [r["dp-accounting pld"]["seconds"] / r["ours"]["seconds"] for r in both]
    agree = max((abs(r["ours"]["sigma"] / r["dp-accounting pld"]["sigma"] - 1) for r in both),
                default=math.nan)
    ok = sum(r["ours"]["certified"] <= r["target"] for r in rows)
    evals = sorted(r["ours"]["evaluations"] for r in rows)
    return (f"dp-accounting's `calibrate_dp_mechanism` with its PLD accountant took {min(speed):.1f}–"
            f"{max(speed):.1f}× dpaudit's calibration time on the {len(both)} targets both answered, "
            f"dpaudit's σ within {agree:.1e} relative of it; {ok} of {len(rows)} returned σ certify at most "
            "the target "
            f"({evals[0]}–{evals[-1]} certified evaluations)")


def incremental_table(data: dict[str, Any]) -> str:
    """One DP-SGD step at a time, then ε: each accountant's time and ε."""
    inc = data["incremental"]
    lines = ["| accountant | time | ε |\n|---|---:|---:|"]
    for name, r in inc.items():
        if name == "steps":
            continue
        note = " (extrapolated from a prefix; ε of the prefix)" if r.get("extrapolated") else ""
        lines.append(f"| {name} | {r['seconds']:.2f} s{note} | {r['epsilon']:.6f} |")
    return "\n".join(lines)


def incremental_sentence(data: dict[str, Any]) -> str:
    """The incremental accountant against Opacus' step() loops, in one sentence."""
    inc = data["incremental"]
    o, r, p = inc["dpaudit Accountant"], inc["Opacus RDPAccountant.step"], inc["Opacus PRVAccountant.step"]
    steps = f"{inc['steps']:,}".replace(",", " ")
    return (f"{steps} steps one at a time then ε: dpaudit {o['seconds']:.2f} s "
            f"(ε {o['epsilon']:.6f}), Opacus RDP {r['seconds']:.2f} s (ε {r['epsilon']:.6f}), "
            f"Opacus PRV {p['seconds']:.1f} s (ε {p['epsilon']:.6f})")
