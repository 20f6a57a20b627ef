"""Tune DP-TS-UCB's α, first epoch and samples at a *certified* privacy budget (``dpaudit tune dp-ts-ucb``).

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

By default (``below_frontier``) the tuner also tries fewer samples than the frontier's, and
narrows the larger field in three stages (:func:`stage_plan`). Checked against a dense grid on the
same seed (:mod:`bandits.experiments.tuner_vs_grid`: every (α, f, φ ≤ φ*), the grid's leaders and
both modes' picks re-run on 2000 fresh paired runs, T = 10⁵): the default is not beaten beyond the
noise at μ = 0.5, 1, 2; the frontier-only search is, at μ = 0.5 (a stuck-prone pick: −135 ± 31)
and μ = 2 (the default's pick, certified 0.87-GDP, leads by 47 ± 15).

Example:
    >>> from bandits import parse_env
    >>> env = parse_env("bernoulli:0.75,0.5")
    >>> res = tune_dp_ts_ucb(env, 2000, target_mu=1.0, reps=2, num=3, first_epochs=(1, 4),
    ...                      below_frontier=False, progress=False)
    >>> [(c.alpha, c.first_epoch, c.samples) for c in res.candidates]  # phi* = floor(f ln^alpha T)
    [(0.0, 1, 1), (0.0, 4, 4), (0.5, 1, 2), (0.5, 4, 11), (1.0, 1, 7), (1.0, 4, 30)]
    >>> all(c.mu <= 1.0 for c in res.candidates)
    True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
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
    "AlphaCandidate",
    "AlphaTuning",
    "BELOW_FIRST_EPOCHS",
    "BELOW_RATIO",
    "FIRST_EPOCHS",
    "c0_for_samples",
    "exact_alpha",
    "frontier_c0",
    "policies_within",
    "sample_ladder",
    "stage_plan",
    "tune_dp_ts_ucb",
    "tuning_candidates",
    "tuning_runs",
]

FIRST_EPOCHS = (1, 4, 16, 64)
"""The first-epoch lengths f the tuner tries beside α (longer first epochs buy samples: φ* ∝ f)."""
BELOW_FIRST_EPOCHS = (1, 2, 4, 8, 16, 32, 64)
"""The first epochs of ``below_frontier`` (the dense-grid check's best sat at f = 32)."""
BELOW_RATIO = 1.5
"""The ratio of the ladder of sampling budgets φ ≤ φ* of ``below_frontier`` (1, 2, 3, 5, 8, …)."""


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
    """One candidate (α, f, φ: on the frontier, or below it), its c₀, certified μ and regret at T."""

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
    """The candidates (increasing α, then f, then φ), the confirmation stages, and the best.

    ``confirmed`` holds (candidate index, mean, s.e.) of the pseudo-regret at T of the leaders
    run again with ``confirm_reps`` repetitions on the seed ``seed + 1``; ``later`` the further
    stages of ``below_frontier`` as (repetitions, results), stage k on the seed ``seed + k + 1``."""

    target_mu: float
    horizon: int
    env: str
    reps: int
    seed: int
    candidates: tuple[AlphaCandidate, ...]
    elapsed: float = 0.0
    confirmed: tuple[tuple[int, float, float], ...] = ()
    confirm_reps: int = 0
    later: tuple[tuple[int, tuple[tuple[int, float, float], ...]], ...] = ()

    @property
    def best(self) -> AlphaCandidate:
        """The leader of the last stage run: the lowest mean pseudo-regret at T there (without a
        confirmation: the candidate with the lowest mean)."""
        last = self.later[-1][1] if self.later else self.confirmed
        if last:
            return self.candidates[min(last, key=lambda c: c[1])[0]]
        return min(self.candidates, key=lambda c: c.regret_mean)

    def table(self, top: int | None = None) -> str:
        """A Markdown table of the candidates (best marked with *); with ``top``, only the ``top``
        best on the seed (and the best) and a line saying how many are left out."""
        best = self.best
        shown = list(self.candidates)
        if top is not None and len(shown) > top:
            keep = set(sorted(range(len(shown)), key=lambda i: shown[i].regret_mean)[:top])
            shown = [c for i, c in enumerate(shown) if i in keep or c is best]
        lines = ["| alpha | first epoch | c0 | phi | certified μ | pseudo-regret (± s.e.) "
                 "| empirical regret (± s.e.) |", "|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for c in shown:
            mark = " *" if c is best else ""
            lines.append(f"| {c.alpha:.4g}{mark} | {c.first_epoch} | {c.c0:.6g} | {c.samples} | "
                         f"{fmt_up(c.mu)} | "
                         f"{c.regret_mean:.1f} ± {c.regret_stderr:.1f} | "
                         f"{c.empirical_mean:.1f} ± {c.empirical_stderr:.1f} |")  # fmt: skip
        if len(shown) < len(self.candidates):
            left = len(self.candidates) - len(shown)
            lines.append(f"| … | {left} more candidates (`--json` lists every one) | | | | | |")
        return "\n".join(lines)

    def confirmation(self) -> str:
        """One line per confirmed leader of each stage (empty without a confirmation)."""
        c = self.candidates
        stages = ((self.confirm_reps, self.confirmed), *self.later)
        return "\n".join(
            f"confirmed on {n} new runs: alpha = {c[i].alpha:.4g}, first epoch = {c[i].first_epoch}, "
            f"phi = {c[i].samples}: pseudo-regret {m:.1f} ± {se:.1f}"
            for n, stage in stages for i, m, se in stage)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        def results(stage: tuple[tuple[int, float, float], ...]) -> list[dict[str, Any]]:
            return [{"candidate": i, "regret_mean": m, "regret_stderr": se} for i, m, se in stage]

        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "confirmed": results(self.confirmed),
            "later": [{"reps": n, "results": results(stage)} for n, stage in self.later],
            "best": self.best.to_dict(),
            "config": {"target_mu": self.target_mu, "horizon": self.horizon, "env": self.env,
                       "reps": self.reps, "seed": self.seed, "elapsed_seconds": self.elapsed,
                       "regret": "pseudo (sum of gaps of the played arms) at T; ranked by its mean"},
        }  # fmt: skip


def sample_ladder(top: int, ratio: float = BELOW_RATIO) -> tuple[int, ...]:
    """1, then ⌈×ratio⌉ steps (each at least +1) below ``top``, and ``top`` itself: the sampling
    budgets φ ≤ φ* the tuner tries with ``below_frontier``.

    >>> sample_ladder(20), sample_ladder(12, 2.0)
    ((1, 2, 3, 5, 8, 12, 18, 20), (1, 2, 4, 8, 12))
    """
    out, v = [], 1
    while v < top:
        out.append(v)
        v = max(v + 1, math.ceil(v * ratio))
    return (*out, top)


def tuning_candidates(
    mu: float,
    horizon: int,
    num: int = 11,
    first_epochs: tuple[int, ...] | None = None,
    below_frontier: bool = True,
) -> list[DPTSUCB]:
    """The candidates of :func:`tune_dp_ts_ucb` at the budget μ: α on ``num`` even points of [0, 1]
    times the first epochs (default: :data:`BELOW_FIRST_EPOCHS` with ``below_frontier``, else
    :data:`FIRST_EPOCHS`), each (α, f) with φ* ≥ 1 at its frontier φ*, and with ``below_frontier``
    every φ of :func:`sample_ladder` (φ*) too (all certified within μ: μ grows with φ).

    >>> pols = tuning_candidates(1.0, 2000, 1, (4,))
    >>> [(p.alpha, p.first_epoch, p.privacy(2000).samples) for p in pols]
    [(0.0, 4, 1), (0.0, 4, 2), (0.0, 4, 3), (0.0, 4, 4)]
    """
    T = check_integer("horizon", horizon, 2)
    alphas = [0.0] if check_integer("num", num, 1) == 1 else np.linspace(0.0, 1.0, num).tolist()
    epochs = _first_epochs(first_epochs, below_frontier)
    return policies_within(mu, T, alphas, epochs, sample_ladder if below_frontier else lambda top: (top,))


def _first_epochs(first_epochs: tuple[int, ...] | None, below_frontier: bool) -> tuple[int, ...]:
    if first_epochs is None:
        return BELOW_FIRST_EPOCHS if below_frontier else FIRST_EPOCHS
    epochs = tuple(check_integer("first_epochs", f, 1) for f in first_epochs)
    if not epochs:
        raise ValueError("first_epochs must name at least one first-epoch length, got ()")
    return epochs


def policies_within(
    mu: float, horizon: int, alphas: Sequence[float], first_epochs: Sequence[int],
    budgets: Callable[[int], Iterable[int]],
) -> list[DPTSUCB]:  # fmt: skip
    """For every (α, f) whose frontier φ* (:func:`frontier_c0`) is at least 1, one policy per
    sampling budget φ in ``budgets(φ*)`` (each in [1, φ*]), configured for T = ``horizon``; every
    one certifies at most μ (checked: μ grows with φ).

    >>> [p.privacy(2000).samples for p in policies_within(1.0, 2000, [0.0], [4], lambda top: (1, top))]
    [1, 4]
    """
    pols = []
    for a in alphas:
        for f in first_epochs:
            top = frontier_c0(mu, horizon, a, f)
            if top is None:
                continue
            phi_top = sample_budget(horizon, a, top)[0]
            for phi in budgets(phi_top):
                c0 = top if phi == phi_top else c0_for_samples(horizon, a, phi)
                if not 1 <= phi <= phi_top or DPTSUCBPrivacy(horizon, a, c0, f).mu > mu:
                    raise ValueError(f"budgets must give samples in [1, {phi_top}] at alpha = {a}, f = {f}, "
                                     f"got {phi}")  # fmt: skip
                pols.append(DPTSUCB(alpha=a, c0=c0, first_epoch=f, design_horizon=horizon))
    return pols


def tuning_runs(candidates: int, reps: int, confirm: int = 3, below_frontier: bool = False) -> int:
    """How many runs of T rounds :func:`tune_dp_ts_ucb` simulates (every stage).

    >>> tuning_runs(44, 10), tuning_runs(600, 10, below_frontier=True)
    (560, 11920)
    """
    return reps * (candidates + sum(n * k for n, k in stage_plan(candidates, confirm, below_frontier)))


def stage_plan(candidates: int, confirm: int = 3, below_frontier: bool = False) -> list[tuple[int, int]]:
    """(leaders kept, repetitions as a multiple of ``reps``) of each confirmation stage: the
    ``confirm`` leaders on 4×; with ``below_frontier`` the best tenth (at least ``confirm``) on 4×,
    the best 10 of those on 16×, the ``confirm`` best of those on 64×.

    >>> stage_plan(44), stage_plan(600, below_frontier=True)
    ([(3, 4)], [(60, 4), (10, 16), (3, 64)])
    """
    if candidates <= 1 or not confirm:
        return []
    if not below_frontier:
        return [(confirm, 4)]
    return [(max(confirm, math.ceil(candidates / 10)), 4), (max(confirm, 10), 16), (confirm, 64)]


def _stage(pols: list[DPTSUCB], lead: list[int], env: Environment, T: int, reps: int, seed: int,
           executor: Executor | None, progress: bool) -> tuple[tuple[int, float, float], ...]:  # fmt: skip
    """(index, mean, s.e.) of the pseudo-regret at T of the candidates ``lead`` on fresh runs."""
    sims = simulate_many([pols[i] for i in lead], env, T, reps, seed, checkpoints=[T], executor=executor,
                         progress=progress, ledgers=False)  # fmt: skip
    return tuple((i, sim.final("pseudo"), float(sim.stderr("pseudo")[-1])) for i, sim in zip(lead, sims))


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
    first_epochs: tuple[int, ...] | None = None,
    confirm: int = 3,
    below_frontier: bool = True,
    executor: Executor | None = None,
    progress: bool = True,
) -> AlphaTuning:
    """α on an even grid of ``num`` points of [0, 1] times the first epochs ``first_epochs``,
    each with c₀ on the certified frontier of the target μ (or of the largest μ meeting (ε, δ)),
    simulated with common random numbers and ranked by mean pseudo-regret (module docstring);
    the ``confirm`` leaders are then run again with 4 × ``reps`` repetitions on the seed
    ``seed + 1`` and the best of them there wins — a configuration that leaves some runs on a
    suboptimal arm (DP-TS-UCB with few samples per epoch mean) can look best on a few runs that
    happened not to stick. ``ValueError`` when no candidate meets the budget.

    With ``below_frontier`` every (α, f) also tries the budgets φ of :func:`sample_ladder` (ratio
    :data:`BELOW_RATIO`) below φ* (fewer samples, a smaller μ: more samples make the index more
    optimistic, which can cost regret), the first epochs default to :data:`BELOW_FIRST_EPOCHS`,
    and the larger field is narrowed in three stages (:func:`stage_plan`), stage k on fresh runs
    of ``seed + k``; the best of the last stage wins."""
    T = check_integer("horizon", horizon, 2)
    num = check_integer("num", num, 1)
    epochs = _first_epochs(first_epochs, below_frontier)
    top = check_integer("confirm", confirm, 0)
    mu = resolve_target_mu(target_mu, target_epsilon, delta)
    pols = tuning_candidates(mu, T, num, epochs, bool(below_frontier))
    if not pols:
        f = max(epochs)
        least = fmt_up(1 / math.sqrt(f * math.log(T)))
        raise ValueError(f"target mu must be at least {least} (one sample of a {f}-observation mean at "
                         f"alpha = 1, T = {T}), got {mu:g}")  # fmt: skip
    t0 = time.perf_counter()
    # regret only: the tuned configuration's own run keeps its ledgers and checks them
    sims = simulate_many(pols, env, T, reps, seed, checkpoints=[T], executor=executor, progress=progress,
                         ledgers=False)  # fmt: skip
    cands = [_candidate(pol, T, sim) for pol, sim in zip(pols, sims)]
    lead = sorted(range(len(cands)), key=lambda i: cands[i].regret_mean)
    stages: list[tuple[int, tuple[tuple[int, float, float], ...]]] = []
    for k, (keep, times) in enumerate(stage_plan(len(cands), top, bool(below_frontier))):
        res = _stage(pols, lead[:keep], env, T, times * reps, seed + 1 + k, executor, progress)
        stages.append((times * reps, res))
        lead = [i for i, _, _ in sorted(res, key=lambda c: c[1])]
    first = stages[0] if stages else (0, ())
    elapsed = time.perf_counter() - t0
    return AlphaTuning(
        mu, T, env.spec, reps, seed, tuple(cands), elapsed, first[1], first[0], tuple(stages[1:])
    )


def _candidate(pol: DPTSUCB, T: int, sim: Any) -> AlphaCandidate:
    p = pol.privacy(T)
    return AlphaCandidate(
        alpha=pol.alpha, c0=pol.c0, samples=p.samples, mu=p.mu, regret_mean=sim.final("pseudo"),
        regret_stderr=float(sim.stderr("pseudo")[-1]), empirical_mean=sim.final("empirical"),
        empirical_stderr=float(sim.stderr("empirical")[-1]), first_epoch=pol.first_epoch,
    )  # fmt: skip


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
