"""Tune DP-TS-UCB's α at a fixed, *certified* privacy budget (``dpaudit tune dp-ts-ucb``).

At a target μ every α has one most generous configuration: the largest sampling budget the
certificate allows, φ*(α) = ⌊μ²·f·ln^α(T)⌋ samples per epoch mean (μ = sqrt(φ/(f·ln^α T)),
:mod:`dpaudit.analyses.dp_ts_ucb`), reached with the constant c₀ = φ*/(T^{0.5(1−α)}·ln^{0.5(3−α)}T)
(:func:`frontier_c0`): the *certified frontier*, on which the budget split between the number of
samples and their variance is α's alone. Candidates are α on an even grid of [0, 1] (those where
φ* ≥ 1), every one within the budget; all are simulated with the same seed (common random numbers)
and ranked by mean pseudo-regret at T, as :mod:`bandits.thompson.tuner` ranks (b, c).

Example:
    >>> from bandits import parse_env
    >>> env = parse_env("bernoulli:0.75,0.5")
    >>> res = tune_dp_ts_ucb(env, 2000, target_mu=1.0, reps=2, num=3, progress=False)
    >>> [(c.alpha, c.samples) for c in res.candidates]  # phi* = floor(ln^alpha T) at mu = 1
    [(0.0, 1), (0.5, 2), (1.0, 7)]
    >>> all(c.mu <= 1.0 for c in res.candidates)
    True
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.dp_ts_ucb.policy import DPTSUCB
from bandits.engine.simulator import simulate_many
from bandits.environments import Environment
from bandits.thompson.frontier import resolve_target_mu
from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy, sample_budget
from dpaudit.formatting import fmt_up
from dpaudit.validation import check_integer

__all__ = ["AlphaCandidate", "AlphaTuning", "frontier_c0", "tune_dp_ts_ucb"]


def frontier_c0(target_mu: float, horizon: int, alpha: float, first_epoch: int = 1) -> float | None:
    """The c₀ whose (ceil-rounded) budget is φ* = ⌊μ²·f·ln^α(T)⌋, the most samples the certificate
    allows at α; None when φ* < 1 (α cannot meet the budget).

    >>> from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy
    >>> c0 = frontier_c0(1.0, 100_000, 1.0)
    >>> sample_budget(100_000, 1.0, c0)[0], DPTSUCBPrivacy(100_000, 1.0, c0).mu <= 1.0
    (11, True)
    """
    unit = DPTSUCBPrivacy(horizon, alpha, 1.0, first_epoch)
    phi = math.floor(target_mu * target_mu * first_epoch * unit.log_factor)
    scale = sample_budget(horizon, alpha, 1.0)[1]  # φ_real at c₀ = 1
    while phi >= 1:
        c0 = phi / scale
        while sample_budget(horizon, alpha, c0)[0] > phi:  # ceil(c₀·scale) must be φ, not φ + 1
            c0 = math.nextafter(c0, 0.0)
        if DPTSUCBPrivacy(horizon, alpha, c0, first_epoch).mu <= target_mu:  # the certificate itself
            return c0
        phi -= 1
    return None


@dataclass(frozen=True)
class AlphaCandidate:
    """One α on the frontier, its c₀ and φ, its certified μ and its simulated regret at T."""

    alpha: float
    c0: float
    samples: int
    mu: float
    regret_mean: float
    regret_stderr: float
    empirical_mean: float
    empirical_stderr: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AlphaTuning:
    """The candidates (increasing α) and the best one."""

    target_mu: float
    horizon: int
    env: str
    reps: int
    seed: int
    candidates: tuple[AlphaCandidate, ...]
    elapsed: float = 0.0

    @property
    def best(self) -> AlphaCandidate:
        """The candidate with the lowest mean pseudo-regret at T."""
        return min(self.candidates, key=lambda c: c.regret_mean)

    def table(self) -> str:
        """A Markdown table of the candidates (best marked with *)."""
        best = self.best.alpha
        lines = ["| alpha | c0 | phi | certified μ | pseudo-regret (± s.e.) | empirical regret (± s.e.) |",
                 "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for c in self.candidates:
            mark = " *" if c.alpha == best else ""
            lines.append(f"| {c.alpha:.4g}{mark} | {c.c0:.6g} | {c.samples} | {fmt_up(c.mu)} | "
                         f"{c.regret_mean:.1f} ± {c.regret_stderr:.1f} | "
                         f"{c.empirical_mean:.1f} ± {c.empirical_stderr:.1f} |")  # fmt: skip
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "best": self.best.to_dict(),
            "config": {"target_mu": self.target_mu, "horizon": self.horizon, "env": self.env,
                       "reps": self.reps, "seed": self.seed, "elapsed_seconds": self.elapsed,
                       "regret": "pseudo (sum of gaps of the played arms) at T; ranked by its mean"},
        }  # fmt: skip


def tune_dp_ts_ucb(
    env: Environment,
    horizon: int,
    *,
    target_mu: float | None = None,
    target_epsilon: float | None = None,
    delta: float | None = None,
    reps: int = 10,
    seed: int = 0,
    num: int = 11,
    executor: Executor | None = None,
    progress: bool = True,
) -> AlphaTuning:
    """α on an even grid of ``num`` points of [0, 1], each with c₀ on the certified frontier of
    the target μ (or of the largest μ meeting (ε, δ)), simulated with common random numbers and
    ranked by mean pseudo-regret (module docstring). ``ValueError`` when no α meets the budget."""
    T = check_integer("horizon", horizon, 2)
    num = check_integer("num", num, 1)
    mu = resolve_target_mu(target_mu, target_epsilon, delta)
    grid = [0.0] if num == 1 else np.linspace(0.0, 1.0, num).tolist()
    pols = []
    for a in grid:
        c0 = frontier_c0(mu, T, a)
        if c0 is not None:
            pols.append(DPTSUCB(alpha=a, c0=c0, design_horizon=T))
    if not pols:
        raise ValueError(f"target mu must be at least {fmt_up(1 / math.sqrt(math.log(T)))} (one sample of a "
                         f"one-observation mean at alpha = 1, T = {T}), got {mu:g}")  # fmt: skip
    t0 = time.perf_counter()
    sims = simulate_many(pols, env, T, reps, seed, checkpoints=[T], executor=executor, progress=progress)
    cands = []
    for pol, sim in zip(pols, sims):
        p = pol.privacy(T)
        cands.append(AlphaCandidate(
            alpha=pol.alpha, c0=pol.c0, samples=p.samples, mu=p.mu, regret_mean=sim.final("pseudo"),
            regret_stderr=float(sim.stderr("pseudo")[-1]), empirical_mean=sim.final("empirical"),
            empirical_stderr=float(sim.stderr("empirical")[-1]),
        ))  # fmt: skip
    return AlphaTuning(mu, T, env.spec, reps, seed, tuple(cands), time.perf_counter() - t0)
