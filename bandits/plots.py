"""Regret plots: one run's curves (``dpaudit run --plot``) and the shared look of every regret axis.

Example:
    >>> from bandits.references.policies import UCB1
    >>> from bandits.run import run_policy
    >>> rep = run_policy(UCB1(), "bernoulli:0.75,0.25", 500, reps=2, progress=False)
    >>> fig = plot_run(rep)
    >>> [ln.get_label() for ln in fig.axes[0].get_lines()]
    ['pseudo-regret', 'empirical regret']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
"""

from __future__ import annotations

from typing import Any

from bandits.engine.results import SimulationResult
from bandits.report import RunReport
from dpaudit.formatting import fmt_up
from dpaudit.plotstyle import series_style

__all__ = ["draw_regret", "style_regret_axes", "plot_run"]


def draw_regret(
    ax: Any, sim: SimulationResult, kind: str, label: str, style: dict[str, Any] | None = None
) -> None:
    """The mean ``kind`` regret of ``sim`` against t with its t-quantile band, on ``ax``
    (``style``: keyword arguments of ``ax.plot``, e.g. :func:`dpaudit.plotstyle.series_style`)."""
    lo, hi = sim.band(kind)
    (ln,) = ax.plot(sim.checkpoints, sim.mean(kind), label=label, **(style or {}))
    ax.fill_between(sim.checkpoints, lo, hi, alpha=0.2, color=ln.get_color())


def style_regret_axes(ax: Any, ylabel: str, title: str) -> None:
    """Log-scale rounds, grid, legend and a small title: the look of every regret plot."""
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_run(report: RunReport, path: str | None = None) -> Any:
    """Pseudo- and empirical regret curves with 95% bands; saves to ``path`` if given."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = report.simulation
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for i, (kind, label) in enumerate((("pseudo", "pseudo-regret"), ("empirical", "empirical regret"))):
        draw_regret(ax, sim, kind, label, series_style(i, 2))
    p = report.privacy
    if not p.private:
        spend = "not private"
    elif p.mu is not None:
        spend = f"{fmt_up(p.mu, 3)}-GDP, eps = {fmt_up(p.epsilon, 3)} at delta = {p.delta:g}"
    else:
        spend = f"eps = {fmt_up(p.epsilon, 3)} at delta = {p.delta:g}"
    style_regret_axes(ax, "regret", f"{report.title} on {report.config.env}\n{spend}")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
