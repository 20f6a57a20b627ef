"""Tune DP-TS-UCB's α and first epoch at a fixed, *certified* privacy budget (``dpaudit tune dp-ts-ucb``).

At a target μ every (α, f) — f the length of an arm's first epoch (epoch r: f·2^r observations)
— has one most generous configuration: the largest sampling budget the certificate allows,
φ*(α, f) = ⌊μ²·f·ln^α(T)⌋ samples per epoch mean (μ = sqrt(φ/(f·ln^α T)),
:mod:`dpaudit.analyses.dp_ts_ucb`), reached with the constant c₀ = φ*/(T^{0.5(1−α)}·ln^{0.5(3−α)}T)
(:func:`frontier_c0`): the *certified frontier*. Candidates are α on an even grid of [0, 1] times
f in :data:`FIRST_EPOCHS` (those where φ* ≥ 1), every one within the budget; all are simulated
with the same seed (common random numbers) and ranked by mean pseudo-regret at T, as
:mod:`bandits.thompson.tuner` ranks (b, c). The first epoch matters most at small budgets: at
μ = 0.5 and T = 10⁵ a first epoch of one observation leaves at most φ* = 2 samples per mean,
whose maximum carries little optimism — runs then stay on a suboptimal arm (15 of 20 on the
Bernoulli §5.1 instance) — while f = 64 allows 16 at α = 0 (pseudo-regret 149 ± 15 against
20 047 ± 3 346, 20 runs).

Checked against a dense grid on the same seed (:mod:`bandits.experiments.tuner_vs_grid`: every
(α, f, φ ≤ φ*), the grid's leaders re-run on fresh paired runs): not beaten beyond the noise at
μ = 0.5, 1, 2 and T = 10⁵, but the best contenders spend *less* than the budget (5–9 samples per
epoch mean at every μ; at μ = 2 one certified 0.47-GDP leads the tuner's pick by 51 ± 31): the
frontier is not always the best place to be, and this tuner searches only the frontier.

Example:
    >>> from bandits import parse_env
    >>> env = parse_env("bernoulli:0.75,0.5")
    >>> res = tune_dp_ts_ucb(env, 2000, target_mu=1.0, reps=2, num=3, first_epochs=(1, 4), progress=False)
    >>> [(c.alpha, c.first_epoch, c.samples) for c in res.candidates]  # phi* = floor(f ln^alpha T)
    [(0.0, 1, 1), (0.0, 4, 4), (0.5, 1, 2), (0.5, 4, 11), (1.0, 1, 7), (1.0, 4, 30)]
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

__all__ = [
    "AlphaCandidate", "AlphaTuning", "FIRST_EPOCHS", "c0_for_samples", "exact_alpha", "frontier_c0",
    "tune_dp_ts_ucb",
]

FIRST_EPOCHS = (1, 4, 16, 64)
"""The first-epoch lengths f the tuner tries beside α (longer first epochs buy samples: φ* ∝ f)."""


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
    while phi >= 1:
        c0 = c0_for_samples(horizon, alpha, phi)
        if DPTSUCBPrivacy(horizon, alpha, c0, first_epoch).mu <= target_mu:  # the certificate itself
            return c0
        phi -= 1
    return None


def c0_for_samples(horizon: int, alpha: float, samples: int) -> float:
    """A c₀ whose (ceil-rounded) sampling budget at (T, α) is exactly ``samples`` = φ ≥ 1: φ divided
    by φ_real at c₀ = 1, nudged down until ⌈c₀·φ_real(1)⌉ is φ and not φ + 1.

    >>> c0 = c0_for_samples(100_000, 0.5, 7)
    >>> sample_budget(100_000, 0.5, c0)[0]
    7
    """
    phi = check_integer("samples", samples, 1)
    c0 = phi / sample_budget(horizon, alpha, 1.0)[1]
    while sample_budget(horizon, alpha, c0)[0] > phi:
        c0 = math.nextafter(c0, 0.0)
    return c0


@dataclass(frozen=True)
class AlphaCandidate:
    """One (α, f) on the frontier, its c₀ and φ, its certified μ and its simulated regret at T."""

    alpha: float
    c0: float
    samples: int
    mu: float
    regret_mean: float
    regret_stderr: float
    empirical_mean: float
    empirical_stderr: float
    first_epoch: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AlphaTuning:
    """The candidates (increasing α, then f), the confirmation of the leading ones, and the best.

    ``confirmed`` holds (candidate index, mean, s.e.) of the pseudo-regret at T of the leaders
    run again with ``confirm_reps`` repetitions on the seed ``seed + 1``."""

    target_mu: float
    horizon: int
    env: str
    reps: int
    seed: int
    candidates: tuple[AlphaCandidate, ...]
    elapsed: float = 0.0
    confirmed: tuple[tuple[int, float, float], ...] = ()
    confirm_reps: int = 0

    @property
    def best(self) -> AlphaCandidate:
        """The confirmed leader with the lowest mean pseudo-regret at T (without a confirmation:
        the candidate with the lowest mean)."""
        if self.confirmed:
            return self.candidates[min(self.confirmed, key=lambda c: c[1])[0]]
        return min(self.candidates, key=lambda c: c.regret_mean)

    def table(self) -> str:
        """A Markdown table of the candidates (best marked with *)."""
        best = self.best
        lines = ["| alpha | first epoch | c0 | phi | certified μ | pseudo-regret (± s.e.) "
                 "| empirical regret (± s.e.) |", "|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for c in self.candidates:
            mark = " *" if c is best else ""
            lines.append(f"| {c.alpha:.4g}{mark} | {c.first_epoch} | {c.c0:.6g} | {c.samples} | "
                         f"{fmt_up(c.mu)} | "
                         f"{c.regret_mean:.1f} ± {c.regret_stderr:.1f} | "
                         f"{c.empirical_mean:.1f} ± {c.empirical_stderr:.1f} |")  # fmt: skip
        return "\n".join(lines)

    def confirmation(self) -> str:
        """One line per confirmed leader (empty without a confirmation)."""
        c = self.candidates
        return "\n".join(
            f"confirmed on {self.confirm_reps} new runs: alpha = {c[i].alpha:.4g}, first epoch = "
            f"{c[i].first_epoch}: pseudo-regret {m:.1f} ± {se:.1f}" for i, m, se in self.confirmed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "confirmed": [{"candidate": i, "regret_mean": m, "regret_stderr": se}
                          for i, m, se in self.confirmed],
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
    first_epochs: tuple[int, ...] = FIRST_EPOCHS,
    confirm: int = 3,
    executor: Executor | None = None,
    progress: bool = True,
) -> AlphaTuning:
    """α on an even grid of ``num`` points of [0, 1] times the first epochs ``first_epochs``,
    each with c₀ on the certified frontier of the target μ (or of the largest μ meeting (ε, δ)),
    simulated with common random numbers and ranked by mean pseudo-regret (module docstring);
    the ``confirm`` leaders are then run again with 4 × ``reps`` repetitions on the seed
    ``seed + 1`` and the best of them there wins — a configuration that leaves some runs on a
    suboptimal arm (DP-TS-UCB with few samples per epoch mean) can look best on a few runs that
    happened not to stick. ``ValueError`` when no candidate meets the budget."""
    T = check_integer("horizon", horizon, 2)
    num = check_integer("num", num, 1)
    epochs = tuple(check_integer("first_epochs", f, 1) for f in first_epochs)
    if not epochs:
        raise ValueError("first_epochs must name at least one first-epoch length, got ()")
    mu = resolve_target_mu(target_mu, target_epsilon, delta)
    grid = [0.0] if num == 1 else np.linspace(0.0, 1.0, num).tolist()
    pols = []
    for a in grid:
        for f in epochs:
            c0 = frontier_c0(mu, T, a, f)
            if c0 is not None:
                pols.append(DPTSUCB(alpha=a, c0=c0, first_epoch=f, design_horizon=T))
    if not pols:
        f = max(epochs)
        least = fmt_up(1 / math.sqrt(f * math.log(T)))
        raise ValueError(f"target mu must be at least {least} (one sample of a {f}-observation mean at "
                         f"alpha = 1, T = {T}), got {mu:g}")  # fmt: skip
    t0 = time.perf_counter()
    # regret only: the tuned configuration's own run keeps its ledgers and checks them
    sims = simulate_many(pols, env, T, reps, seed, checkpoints=[T], executor=executor, progress=progress,
                         ledgers=False)  # fmt: skip
    cands = []
    for pol, sim in zip(pols, sims):
        p = pol.privacy(T)
        cands.append(AlphaCandidate(
            alpha=pol.alpha, c0=pol.c0, samples=p.samples, mu=p.mu, regret_mean=sim.final("pseudo"),
            regret_stderr=float(sim.stderr("pseudo")[-1]), empirical_mean=sim.final("empirical"),
            empirical_stderr=float(sim.stderr("empirical")[-1]), first_epoch=pol.first_epoch,
        ))  # fmt: skip
    confirmed: tuple[tuple[int, float, float], ...] = ()
    top = check_integer("confirm", confirm, 0)
    lead = sorted(range(len(cands)), key=lambda i: cands[i].regret_mean)[:top]
    if len(cands) > 1 and lead:
        again = simulate_many([pols[i] for i in lead], env, T, 4 * reps, seed + 1, checkpoints=[T],
                              executor=executor, progress=progress, ledgers=False)  # fmt: skip
        confirmed = tuple((i, sim.final("pseudo"), float(sim.stderr("pseudo")[-1]))
                          for i, sim in zip(lead, again))
    return AlphaTuning(mu, T, env.spec, reps, seed, tuple(cands), time.perf_counter() - t0, confirmed,
                       4 * reps if confirmed else 0)  # fmt: skip


def exact_alpha(mu: float, horizon: int, samples: int, first_epoch: int = 1) -> tuple[float, float] | None:
    """(α, c₀) at which DP-TS-UCB with ``samples`` samples per epoch mean and first epoch
    ``first_epoch`` certifies exactly μ-GDP (μ = sqrt(φ/(f·ln^α T)), :mod:`dpaudit.analyses.dp_ts_ucb`,
    to 1e-9 and never above), c₀ on α's frontier (:func:`frontier_c0`); None when that α is not in
    [0, 1]. The tuner's α lies on a grid, where the integer φ leaves the certified μ below the
    target: the leaderboard keeps the tuned φ and f and moves α to spend the budget exactly.

    >>> a, c0 = exact_alpha(1.0, 20_000, 4)
    >>> p = DPTSUCBPrivacy(20_000, a, c0)
    >>> round(a, 4), p.samples, abs(p.mu - 1.0) < 1e-9
    (0.6046, 4, True)
    """
    a = math.log(samples / (first_epoch * mu**2)) / math.log(math.log(horizon))
    if not 0.0 <= a <= 1.0:
        return None
    for _ in range(64):  # rounding: nudge α up until φ is the tuned one and μ at most the target
        c0 = frontier_c0(mu, horizon, a, first_epoch)
        if c0 is not None:
            p = DPTSUCBPrivacy(horizon, a, c0, first_epoch)
            if p.samples == samples and mu * (1 - 1e-9) <= p.mu <= mu:
                return a, c0
        a = math.nextafter(a, 2.0)
    return None
