"""The experiments of Hu et al. (2024), their full-information study, and Figure 5 of Ou, Avella
Medina & Cummings (2024), regenerated.

``python -m bandits.experiments.private_stochastic_bandits [--full] [--workers 2] [--out DIR]`` runs:

1. **Hu et al. (2024), §6 (Figures 1–2)** — setting 1 (Bernoulli means 0.75, 0.625, 0.5, 0.375,
   0.25) and setting 2 (0.5 and four arms at 0.4), ε ∈ {0.25, 0.5, 1}: Anytime-Lazy-UCB,
   Lazy-DP-TS, DP-SE (β = 1/T) and AdaP-KLUCB (α = 3.1), common random numbers, every
   repetition's observed ledger checked against the declaration. Full scale: T = 10⁶, 20 runs.
   Output: regret curves with ±1.96 s.e. bands (one figure per setting, one panel per ε), a table
   of final pseudo-regret ± s.e., and the paper's two claims checked with a verdict each.
2. **RNM-FTNL** on the "all gaps equal" full-information instance (one action 0.6, K − 1 at
   0.5), K ∈ {4, 16, 64}: published noise Lap(1/ε) (certified 2ε), corrected Lap(2/ε)
   (certified ε), naive FTNL (Lap(K/ε) sums), at ε ∈ {0.05, 0.5}, with the slope of regret in ln K.
3. **Ou, Avella Medina & Cummings (2024), Figure 5** — modified Thompson sampling against DP-SE
   and Anytime-Lazy-UCB on the §5.1 arms (T = 10⁵, 10 runs) at ε = 4.8866, 35.5663, 96.7173
   (1-, 5-, 10-GDP at δ = 10⁻⁶). Thompson sampling's (b, c) is the tuner's best
   (:func:`bandits.thompson.tuner.tune_thompson`, on its own seed) at the GDP budget μ =
   :func:`dpaudit.conversions.gdp_mu` (ε, 10⁻⁶) converted exactly; the pure-ε algorithms get the
   same ε with δ = 0. **This compares an (ε, 10⁻⁶) guarantee with pure ε-DP ones** (the paper's own
   framing). Lazy-DP-TS is drawn as an extra, dashed line (not in the paper's figure).

Without ``--full`` everything runs at a reduced scale (seconds; what the tests execute).
Figures go to ``--out`` (default: ``docs/img`` with ``--full``, a temporary folder otherwise, so a
quick run never overwrites the shipped figures), the numbers to ``private_stochastic_results.json``
there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bandits.experiments.full_information import FULL_INFO_ALGS, FULL_INFO_EPS, full_info_grid, plot_full_info
from bandits.experiments.grid import LABELS, SCALES, Cell, Scale, _cell, _map, _summary
from bandits.experiments.notebook_runner import default_out
from bandits.experiments.thompson_figure5 import figure5, plot_figure5

__all__ = ["bandit_grid", "bandit_claims", "plot_bandit_grid", "markdown_tables", "run_all", "main"]

SETTINGS = {
    1: "bernoulli:0.75,0.625,0.5,0.375,0.25",
    2: "bernoulli:0.5,0.4,0.4,0.4,0.4",
}
EPSILONS = (0.25, 0.5, 1.0)
ALGS = ("lazy-ucb", "lazy-dp-ts", "dp-se", "adap-klucb")


# ---------------------------------------------------------------------------------------
# 1. Hu et al. (2024), §6


def bandit_grid(scale: Scale, executor: Executor | None = None) -> dict[str, Any]:
    """Both settings × ε × the four algorithms; returns cells, table rows and the claim checks."""
    cells = [
        Cell(alg, SETTINGS[s], eps, scale.T, scale.runs)
        for s in SETTINGS
        for eps in EPSILONS
        for alg in ALGS
    ]
    t0 = time.perf_counter()
    results = _map(cells, executor)
    elapsed = time.perf_counter() - t0
    table = []
    for c, r in zip(cells, results):
        m, se = _summary(r)
        setting = next(k for k, v in SETTINGS.items() if v == c.env)
        table.append(
            {
                "setting": setting,
                "eps": c.eps,
                "alg": c.alg,
                "mean": m,
                "se": se,
                "seconds": r["seconds"],
                "cpu_seconds": r["cpu_seconds"],
            }
        )
    cpu = sum(r["cpu_seconds"] for r in results)
    return {
        "results": results,
        "table": table,
        "claims": bandit_claims(table),
        "elapsed": elapsed,
        "cpu": cpu,
        "T": scale.T,
        "runs": scale.runs,
    }


def bandit_claims(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The paper's two claims (§6) with a verdict each, from the final regrets ± s.e."""
    better, similar = [], []
    for s in SETTINGS:
        for eps in EPSILONS:
            ts = _cell(table, s, eps, "lazy-dp-ts")
            for other in ("dp-se", "lazy-ucb"):
                o = _cell(table, s, eps, other)
                gap = o["mean"] - ts["mean"]
                z = gap / math.hypot(ts["se"], o["se"]) if (ts["se"] or o["se"]) else math.inf
                better.append(
                    {"setting": s, "eps": eps, "vs": other, "ratio": o["mean"] / ts["mean"], "z": z}
                )
            a = _cell(table, s, eps, "adap-klucb")
            similar.append({"setting": s, "eps": eps, "ratio": ts["mean"] / a["mean"]})
    n_better = sum(b["z"] > 2 for b in better)
    ratios = [x["ratio"] for x in similar]
    if all(0.5 <= r <= 2.0 for r in ratios):
        sim_verdict = "holds (within a factor 2 either way)"
    elif all(r < 1.0 for r in ratios):
        sim_verdict = (
            f"does not hold: Lazy-DP-TS is better, its regret {min(ratios):.2f}-{max(ratios):.2f} "
            "of AdaP-KLUCB's"
        )
    else:
        sim_verdict = "does not hold (beyond a factor 2)"
    lo = min(b["ratio"] for b in better)
    hi = max(b["ratio"] for b in better)
    return [
        {
            "claim": "Lazy-DP-TS always performs better than DP-SE and Anytime-Lazy-UCB",
            "verdict": "holds"
            if n_better == len(better)
            else f"fails in {len(better) - n_better} of {len(better)}",
            "evidence": f"lower by more than 2 s.e. in {n_better} of {len(better)} comparisons; "
            f"ratios (other / Lazy-DP-TS) {lo:.2f}-{hi:.2f}",
            "cells": better,
        },
        {
            "claim": "Lazy-DP-TS performs similarly to AdaP-KLUCB",
            "verdict": sim_verdict,
            "evidence": "Lazy-DP-TS / AdaP-KLUCB = "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + " (settings 1 then 2, eps 0.25, 0.5, 1)",
            "cells": similar,
        },
    ]


def plot_bandit_grid(grid: dict[str, Any], out: Path) -> list[Path]:
    """One figure per setting, one panel per ε, regret curves with ±1.96 s.e. bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for s, env in SETTINGS.items():
        fig, axes = plt.subplots(1, len(EPSILONS), figsize=(13, 4.0), sharey=False)
        for ax, eps in zip(axes, EPSILONS):
            for r in grid["results"]:
                if r["env"] != env or r["eps"] != eps:
                    continue
                t, m, se = np.asarray(r["t"]), np.asarray(r["mean"]), np.asarray(r["stderr"])
                (ln,) = ax.plot(t, m, label=LABELS[r["alg"]])
                ax.fill_between(t, m - 1.96 * se, m + 1.96 * se, alpha=0.2, color=ln.get_color())
            ax.set_xscale("log")
            ax.set_title(f"setting {s}, epsilon = {eps:g}", fontsize=10)
            ax.set_xlabel("round t")
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("pseudo-regret (mean, 95% band)")
        axes[0].legend(fontsize=8)
        fig.suptitle(
            f"Hu et al. 2024, {'Figure 1' if s == 1 else 'Figure 2'}: {env}, "
            f"T = {grid['T']}, {grid['runs']} runs",
            fontsize=10,
        )
        fig.tight_layout()
        path = out / f"private_stochastic_setting{s}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------
# 2. RNM-FTNL, all gaps equal


# ---------------------------------------------------------------------------------------
# 3. Figure 5 of Ou, Avella Medina & Cummings (2024)


# ---------------------------------------------------------------------------------------
# text


def markdown_tables(grid: dict[str, Any], fi: dict[str, Any], fig5: dict[str, Any]) -> str:
    lines = [
        f"### Hu et al. (2024), §6: final pseudo-regret ± s.e. (T = {grid['T']}, {grid['runs']} runs)",
        "",
        "| setting | epsilon | " + " | ".join(LABELS[a] for a in ALGS) + " |",
        "|---:|---:|" + "---:|" * len(ALGS),
    ]
    for s in SETTINGS:
        for eps in EPSILONS:
            cells = [_cell(grid["table"], s, eps, a) for a in ALGS]
            lines.append(
                f"| {s} | {eps:g} | " + " | ".join(f"{c['mean']:.0f} ± {c['se']:.0f}" for c in cells) + " |"
            )
    lines += ["", "Claims:"]
    for c in grid["claims"]:
        lines.append(f"* {c['claim']}: **{c['verdict']}** ({c['evidence']})")
    lines += [
        "",
        f"### Full information, all gaps 0.1 (T = {fi['T']}, {fi['runs']} runs): pseudo-regret ± s.e.",
        "",
        "| K | epsilon | " + " | ".join(LABELS[a] for a in FULL_INFO_ALGS) + " |",
        "|---:|---:|" + "---:|" * len(FULL_INFO_ALGS),
    ]
    Ks = sorted({r["K"] for r in fi["rows"]})
    for K in Ks:
        for eps in FULL_INFO_EPS:
            rs = [
                next(r for r in fi["rows"] if r["K"] == K and r["eps"] == eps and r["alg"] == a)
                for a in FULL_INFO_ALGS
            ]
            lines.append(
                f"| {K} | {eps:g} | " + " | ".join(f"{r['mean']:.0f} ± {r['se']:.0f}" for r in rs) + " |"
            )
    lines += [
        "",
        "Slope of regret in ln K: "
        + "; ".join(
            f"{LABELS[s['alg']]} at eps {s['eps']:g}: {s['slope_per_lnK']:.1f}" for s in fi["slopes"]
        ),
    ]
    lines += [
        "",
        f"### Ou, Avella Medina & Cummings (2024), Figure 5 (T = {fig5['T']}, {fig5['runs']} runs; "
        "TS tuned on its own seed)",
        "",
        "| epsilon | TS mu (delta 1e-6) | TS (b, c) | TS | DP-SE | Anytime-Lazy-UCB | Lazy-DP-TS (extra) |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for p in fig5["panels"]:
        r = {x["alg"]: x for x in p["rows"]}
        lines.append(
            f"| {p['eps']:g} | {p['mu']:.4f} | ({p['b']}, {p['c']:.4g}) | "
            + " | ".join(
                f"{r[a]['mean']:.0f} ± {r[a]['se']:.0f}" for a in ("ts", "dp-se", "lazy-ucb", "lazy-dp-ts")
            )
            + " |"
        )
    c = fig5["claim"]
    lines += [
        "",
        f"* {c['claim']}: **{c['verdict']}** (best pure-DP regret / TS regret = "
        + ", ".join(f"{x:.2f}" for x in c["ratios_best_pure_over_ts"])
        + ")",
    ]
    return "\n".join(lines)


def run_all(scale: Scale, out: Path, workers: int = 1) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    executor = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        t0 = time.perf_counter()
        grid = bandit_grid(scale, executor)
        fi = full_info_grid(scale, executor)
        fig5 = figure5(scale, executor)
        total = time.perf_counter() - t0
    finally:
        if executor is not None:
            executor.shutdown()
    figs = plot_bandit_grid(grid, out) + [plot_full_info(fi, out), plot_figure5(fig5, out)]
    text = markdown_tables(grid, fi, fig5)
    slim = {
        "scale": scale.name,
        "workers": workers,
        "seconds": {
            "bandit_grid": grid["elapsed"],
            "full_info": fi["elapsed"],
            "figure5": fig5["elapsed"],
            "total": total,
            "bandit_grid_cpu": grid["cpu"],
        },
        "bandit_grid": {
            "table": grid["table"],
            "claims": [{k: v for k, v in c.items()} for c in grid["claims"]],
        },
        "full_info": {"rows": fi["rows"], "slopes": fi["slopes"]},
        "figure5": {
            "panels": [{k: v for k, v in p.items() if k != "results"} for p in fig5["panels"]],
            "claim": fig5["claim"],
        },
    }
    (out / "private_stochastic_results.json").write_text(json.dumps(slim, indent=1))
    return {"grid": grid, "full_info": fi, "figure5": fig5, "figures": figs, "text": text, "summary": slim}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bandits.experiments.private_stochastic_bandits", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--full", action="store_true", help="the papers' scale (T = 10^6, 20 runs; Figure 5 T = 10^5)"
    )
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--out", default=os.environ.get("DPAUDIT_FIGURES_DIR"),
                   help="output folder (default: docs/img with --full, else a temporary folder)")  # fmt: skip
    args = p.parse_args(argv)
    scale = SCALES["full" if args.full else "reduced"]
    out = Path(args.out) if args.out else default_out("private_stochastic_bandits", args.full)
    print(f"scale: {scale.name}; figures to {out.resolve()}", flush=True)
    res = run_all(scale, out, max(1, args.workers))
    print(
        f"scale: {scale.name}; seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in res["summary"]["seconds"].items())
    )
    print(res["text"])
    print(f"figures written to {out.resolve()}: " + ", ".join(f.name for f in res["figures"]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
