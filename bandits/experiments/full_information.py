"""RNM-FTNL on the "all gaps equal" full-information instance (Hu, Huang, Mehta & Hegde, §5).

One action at 0.6, K − 1 at 0.5, K ∈ {4, 16, 64}: the published noise Lap(1/ε) (certified 2ε), the
corrected Lap(2/ε) (certified ε) and the naive FTNL (Lap(K/ε) sums), at ε ∈ {0.05, 0.5}, with the
slope of regret in ln K.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np

from bandits.environments import parse_env
from bandits.experiments.grid import LABELS, Cell, Scale, _map, _summary

__all__ = [
    "gaps_equal_env",
    "FULL_INFO_EPS",
    "FULL_INFO_ALGS",
    "full_info_grid",
    "plot_full_info",
]


def gaps_equal_env(K: int, best: float = 0.6, rest: float = 0.5) -> str:
    return "bernoulli:" + ",".join([repr(best)] + [repr(rest)] * (K - 1))


FULL_INFO_EPS = (0.05, 0.5)


FULL_INFO_ALGS = ("rnm-published", "rnm-corrected", "naive")


def full_info_grid(scale: Scale, executor: Executor | None = None) -> dict[str, Any]:
    cells = [
        Cell(alg, gaps_equal_env(K), eps, scale.full_T, scale.full_runs)
        for K in scale.Ks
        for eps in FULL_INFO_EPS
        for alg in FULL_INFO_ALGS
    ]
    t0 = time.perf_counter()
    results = _map(cells, executor)
    rows: list[dict[str, Any]] = []
    for c, r in zip(cells, results):
        m, se = _summary(r)
        rows.append({"K": parse_env(c.env).n_arms, "eps": c.eps, "alg": c.alg, "mean": m, "se": se})
    slopes = []
    for eps in FULL_INFO_EPS:
        for alg in FULL_INFO_ALGS:
            pts = [(math.log(r["K"]), r["mean"]) for r in rows if r["eps"] == eps and r["alg"] == alg]
            x, y = np.array(pts).T
            slope = float(np.polyfit(x, y, 1)[0]) if x.size > 1 else float("nan")
            # theory (Thm 9, Cor. 10b): regret ~ log K / min(Delta, eps'), eps' = certified epsilon
            slopes.append({"eps": eps, "alg": alg, "slope_per_lnK": slope})
    return {
        "rows": rows,
        "slopes": slopes,
        "results": results,
        "elapsed": time.perf_counter() - t0,
        "T": scale.full_T,
        "runs": scale.full_runs,
    }


def plot_full_info(grid: dict[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(FULL_INFO_EPS), figsize=(10, 4.0))
    for ax, eps in zip(axes, FULL_INFO_EPS):
        for alg in FULL_INFO_ALGS:
            rs = [r for r in grid["rows"] if r["eps"] == eps and r["alg"] == alg]
            K = [r["K"] for r in rs]
            ax.errorbar(
                K,
                [r["mean"] for r in rs],
                yerr=[1.96 * r["se"] for r in rs],
                marker="o",
                capsize=3,
                label=LABELS[alg],
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K (one action 0.6, the others 0.5)")
        ax.set_title(f"epsilon = {eps:g}, T = {grid['T']}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("pseudo-regret at T (mean, 95% CI)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = out / "private_stochastic_full_info.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
