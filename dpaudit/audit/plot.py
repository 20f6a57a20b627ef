"""Plot an audit: the empirical trade-off region against the certified trade-off curve.

Every threshold test of the audit gives a confidence box [FPR_lo, FPR_hi] × [FNR_lo, FNR_hi]
(simultaneous Clopper–Pearson bounds). The certified claim is drawn as its trade-off curve:
the GDP curve ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` for μ claims, the piecewise-linear
``max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α))`` for (ε, δ) claims. A box lying entirely below
the curve (its upper-right corner below it) refutes the claim; such tests are drawn in red.
Both axes are drawn twice: linear (the whole region) and logarithmic (the small-error corner
where violations of small-δ claims live).

Confidence of the drawing: each of the T tests has four Clopper–Pearson bounds, each at
α/(2T) (α = 1 − confidence), so the *upper-right corners* (the bounds every verdict uses) hold
simultaneously with probability ≥ 1 − α, and the whole *boxes* (both ends) with probability
≥ 1 − 2α: the legend says both (e.g. "corners 95 %, boxes 90 % simultaneous").

Example:
    >>> import os, tempfile
    >>> import numpy as np
    >>> from dpaudit.audit import AuditTarget, Identity, claim_mu, run_audit_with_rates, scalar_pair
    >>> class Shift:   # x + N(0, 1): 1-GDP between 0 and 1
    ...     def sample(self, x, rng, size):
    ...         return x + rng.standard_normal(size)
    >>> target = AuditTarget("shift", Shift(), scalar_pair(1.0), Identity(), claim_mu(1.0), 1e-5)
    >>> report, rates = run_audit_with_rates(target, trials=20_000, seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "audit.png")
    >>> plot_audit(report, rates, path) == path and os.path.getsize(path) > 10_000
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpaudit.audit.curves import epsilon_dp_tradeoff_curve, gdp_tradeoff_curve
from dpaudit.audit.report import AuditReport
from dpaudit.audit.thresholds import ThresholdRates
from dpaudit.formatting import fmt_down, fmt_up

__all__ = ["plot_audit"]


def _corner_style(count: int, ordinary: bool, colour: str) -> dict[str, Any]:
    """Markers of the tests' upper-right corners: a few (the pilot's single certifying test) as
    large outlined stars that cannot be missed, many as small dots, violating ones as crosses."""
    if not ordinary:
        return {"marker": "X", "ms": 9, "color": colour, "markeredgecolor": "black", "linestyle": "none",
                "zorder": 3}  # fmt: skip
    few = count <= 5
    return {"marker": "*" if few else "o", "ms": 13 if few else 3.5, "color": colour,
            "markeredgecolor": "black" if few else colour, "linestyle": "none", "zorder": 3}  # fmt: skip


def plot_audit(report: AuditReport, rates: ThresholdRates, path: str, *, max_boxes: int = 400) -> str:
    """Write a PNG of the confidence boxes of ``rates`` and the certified curve of ``report``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    c = report.certified
    curves: list[tuple[str, Any]] = []
    if c.mu is not None:
        curves.append((f"certified {fmt_up(c.mu, 4)}-GDP ({c.source})", gdp_tradeoff_curve(c.mu)))
    if c.epsilon is not None and c.delta is not None:
        curves.append(
            (
                f"certified ({fmt_up(c.epsilon, 4)}, {c.delta:.3g})-DP ({c.source})",
                epsilon_dp_tradeoff_curve(c.epsilon, c.delta),
            )
        )
    fl, fh = np.asarray(rates.fpr_lower), np.asarray(rates.fpr_upper)
    nl, nh = np.asarray(rates.fnr_lower), np.asarray(rates.fnr_upper)
    bad = np.zeros(fl.size, dtype=bool)
    for _, f in curves:  # a test whose upper-right corner lies below a claimed curve refutes it
        bad |= (np.asarray(f(fh)) > nh) | (np.asarray(f(nh)) > fh)
    idx = np.arange(fl.size)
    if idx.size > max_boxes:
        idx = np.unique(np.concatenate([np.linspace(0, idx.size - 1, max_boxes).round().astype(int),
                                        np.flatnonzero(bad)]))  # fmt: skip
    box_conf = max(0.0, 1.0 - 4.0 * rates.tests * rates.alpha_per_bound)
    corner_conf = 1.0 - 2.0 * rates.tests * rates.alpha_per_bound
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, log in zip(axes, (False, True)):
        groups = ((idx[~bad[idx]], "tab:blue", "tests"), (idx[bad[idx]], "tab:red", "violating tests"))
        for sel, col, what in groups:
            if sel.size == 0:
                continue
            boxes = [
                Rectangle((fl[i], nl[i]), max(fh[i] - fl[i], 1e-12), max(nh[i] - nl[i], 1e-12)) for i in sel
            ]
            ax.add_collection(PatchCollection(boxes, facecolor=col, edgecolor=col, alpha=0.35, linewidth=0.6))
            ax.plot(
                fh[sel],
                nh[sel],
                **_corner_style(sel.size, what == "tests", col),
                label=f"{sel.size} {what} of {rates.tests}: upper-right corners {corner_conf:.0%}, "
                f"boxes {box_conf:.0%} simultaneous",
            )
        lo = 1e-7 if log else 0.0
        grid = np.geomspace(max(lo, 1e-9), 1.0, 400) if log else np.linspace(0.0, 1.0, 400)
        for (label, f), col in zip(curves, ("tab:purple", "tab:orange")):
            ax.plot(grid, np.asarray(f(grid)), "-", color=col, lw=1.6, label=label)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            pos = np.concatenate([fl[fl > 0], nl[nl > 0]])
            floor = max(1e-9, float(pos.min()) / 3) if pos.size else 1e-6
            ax.set_xlim(floor, 1.0)
            ax.set_ylim(floor, 1.0)
        else:
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("false-positive rate (type I error)")
        ax.set_ylabel("false-negative rate (type II error)")
        ax.grid(True, which="both", alpha=0.3)
    e = report.empirical
    axes[0].set_title(
        f"{report.target}: {report.verdict} — μ_lb={fmt_down(e.mu_lower, 3)}, ε_lb(δ={e.delta:g})="
        f"{fmt_down(e.epsilon_lower, 3)}",
        fontsize=9,
    )
    axes[1].set_title(f"{e.trials:,} trials, statistic: {e.statistic}", fontsize=9)
    axes[0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
