"""Runs of the leaderboard that stayed on a suboptimal arm, read from its stored repetitions.

A mean regret with a large standard error can hide two kinds of runs: most near the best arm's
regret, a few that spent most of the horizon on a suboptimal arm (linear regret). The paired
"within 2 s.e." rule of :func:`bandits.experiments.leaderboard.winner` then reads "no clear
winner", although the algorithm loses in most cells of most seeds by a wide margin. This module
counts those runs per algorithm and cell: a run is *stuck* when its pseudo-regret at T exceeds
half of T·Δ_min (Δ_min the smallest positive gap of the instance), which no run that plays the
best arm in most rounds can reach, in a row where another run stayed below a tenth of it (a row
whose every run is high — many forced explorations, say — is slow, not bimodal).

Example:
    >>> cell = {"instance": "bernoulli", "env": "bernoulli:0.75,0.5", "horizon": 100, "mu": 1.0,
    ...         "rows": [{"algorithm": "a", "finals": [1.0, 20.0, 2.0]},
    ...                  {"algorithm": "b", "finals": [15.0, 14.0, 16.0]}]}
    >>> stuck_runs({"cells": [cell]})  # b is slow in every run, not stuck in some
    [('bernoulli', 100, 1.0, 'a', 1, 3)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bandits.environments import parse_env

__all__ = ["stuck_limit", "stuck_runs", "stuck_sentence"]


def stuck_limit(env: str, horizon: int) -> float:
    """T·Δ_min/2 for the instance ``env`` (Δ_min its smallest positive gap): a run whose
    pseudo-regret at T exceeds it spent most of the horizon on a suboptimal arm.

    >>> stuck_limit("bernoulli:0.75,0.625,0.5", 100_000)
    6250.0
    """
    gaps = parse_env(env).gaps
    return 0.5 * horizon * float(gaps[gaps > 0].min())


def stuck_runs(data: dict[str, Any]) -> list[tuple[str, int, float, str, int, int]]:
    """(instance, T, μ, algorithm, stuck runs, runs) for every row of a stored leaderboard with
    at least one stuck run (module docstring)."""
    out = []
    for cell in data["cells"]:
        limit = stuck_limit(cell["env"], cell["horizon"])
        for row in cell["rows"]:
            finals = np.asarray(row["finals"], dtype=float)
            k = int((finals > limit).sum())
            if k and finals.min() < 0.2 * limit:
                out.append((cell["instance"], int(cell["horizon"]), float(cell["mu"]), row["algorithm"], k,
                            int(finals.size)))  # fmt: skip
    return out


def stuck_sentence(data: dict[str, Any]) -> str:
    """One sentence per algorithm with stuck runs: their count in each cell where there are any."""
    from bandits.experiments.leaderboard import INSTANCES, LABELS

    rows = stuck_runs(data)
    if not rows:
        return "no run of any algorithm stayed on a suboptimal arm (pseudo-regret at T above T·Δ_min/2)"
    parts = []
    for alg in dict.fromkeys(r[3] for r in rows):
        cells = [f"{k}/{n} ({INSTANCES[inst][0].split(' (')[0]}, T = {T}, μ = {mu:g})"
                 for inst, T, mu, a, k, n in rows if a == alg]  # fmt: skip
        parts.append(f"{LABELS[alg]}: " + ", ".join(cells))
    return ("runs whose pseudo-regret at T exceeds T·Δ_min/2 (most of the horizon on a suboptimal arm) "
            "while another run of the same cell stays below T·Δ_min/10: " + "; ".join(parts)
            + "; every other algorithm: none")
