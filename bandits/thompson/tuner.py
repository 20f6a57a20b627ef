"""Tune the (b, c) of private Gaussian Thompson sampling at a fixed, *certified* privacy budget.

Candidates lie on the certified budget frontier (:mod:`bandits.thompson.frontier`): each spends
exactly the target μ (or the μ of a target ε at δ, converted exactly), never more. If even
(b, c) = (0, 1) is within budget the b = 0 candidate is plain Algorithm 1 (c = 1, under budget).

All candidates are simulated with the *same seed* (common random numbers: the same reward
table in every repetition), and ranked by mean pseudo-regret Σ_t (μ* − μ_{a_t}) at T (lower
variance than the empirical regret μ*T − Σ r_t; both are reported).

Example:
    >>> from bandits import parse_env
    >>> from bandits.thompson.tuner import tune_thompson
    >>> env = parse_env("bernoulli:0.75,0.5")
    >>> res = tune_thompson(env, 2000, target_mu=1.0, reps=2, num=4, progress=False)
    >>> [c.b for c in res.candidates]   # grid 0, 1, 26, 666; rule of thumb 268; two refinements
    [0, 1, 26, 57, 123, 159, 207, 268, 297, 328, 363, 492, 666]
    >>> all(c.mu <= 1.0 for c in res.candidates), res.best.b > 0
    (True, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bandits.engine.results import SimulationResult, log_checkpoints
from bandits.engine.simulator import simulate, simulate_many
from bandits.environments import Environment
from bandits.thompson.frontier import (
    budget_pair,
    candidate_prepulls,
    max_prepulls,
    resolve_target_mu,
    rule_of_thumb_prepulls,
)
from bandits.thompson.policy import GaussianTS
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.formatting import fmt_up
from dpaudit.plotstyle import series_style
from dpaudit.tasks import run_tasks
from dpaudit.validation import check_integer

__all__ = [
    "Candidate",
    "TuningResult",
    "refine_prepulls",
    "tune_thompson",
    "plot_tuning",
]


@dataclass(frozen=True)
class Candidate:
    """One (b, c) on the frontier and its simulated regret at T (mean ± standard error over
    repetitions). ``late_slope`` is the mean pseudo-regret per round over the last tenth of the
    horizon, (R(T) − R(0.9T))/(0.1T): close to the mean gap for a policy that has not converged
    (or is still pre-pulling), close to 0 for one that has."""

    b: int
    c: float
    mu: float
    mu_paper: float
    regret_mean: float
    regret_stderr: float
    empirical_mean: float
    empirical_stderr: float
    late_slope: float
    on_frontier: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "b": self.b,
            "c": self.c,
            "mu": self.mu,
            "mu_paper": self.mu_paper,
            "regret_mean": self.regret_mean,
            "regret_stderr": self.regret_stderr,
            "empirical_mean": self.empirical_mean,
            "empirical_stderr": self.empirical_stderr,
            "late_slope": self.late_slope,
            "on_frontier": self.on_frontier,
        }


@dataclass(frozen=True, eq=False)
class TuningResult:
    """The candidates (in increasing b), their simulations, and the best pair."""

    target_mu: float
    horizon: int
    arms: int
    env: str
    reps: int
    seed: int
    candidates: tuple[Candidate, ...]
    simulations: tuple[SimulationResult, ...] = field(repr=False)
    elapsed: float = 0.0
    target_epsilon: float | None = None
    delta: float | None = None

    @property
    def best(self) -> Candidate:
        """The candidate with the lowest mean pseudo-regret at T."""
        return min(self.candidates, key=lambda c: c.regret_mean)

    def simulation(self, b: int) -> SimulationResult:
        """The simulation of the candidate with pre-pulls ``b``."""
        for cand, sim in zip(self.candidates, self.simulations):
            if cand.b == b:
                return sim
        raise ValueError(f"no candidate with b = {b}; candidates: {[c.b for c in self.candidates]}")

    def paired_difference(self, b1: int, b2: int, kind: str = "pseudo") -> tuple[float, float]:
        """Mean and standard error over repetitions of regret(b1) − regret(b2) at T. Common random
        numbers make this much tighter than the two separate standard errors."""
        d = self.simulation(b1)._curves(kind)[:, -1] - self.simulation(b2)._curves(kind)[:, -1]
        se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else 0.0
        return float(d.mean()), se

    def table(self) -> str:
        """A Markdown table of the candidates (best marked with *)."""
        best = self.best.b
        lines = [
            "| b | c | certified μ | pseudo-regret (± s.e.) | empirical regret (± s.e.) | late slope |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for c in self.candidates:
            mark = " *" if c.b == best else ""
            lines.append(
                f"| {c.b}{mark} | {c.c:.6g} | {fmt_up(c.mu)} | {c.regret_mean:.1f} ± {c.regret_stderr:.1f} "
                f"| {c.empirical_mean:.1f} ± {c.empirical_stderr:.1f} | {c.late_slope:.4f} |"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``candidates`` (each ``b``, ``c``, ``mu``, ``regret_mean``, ``regret_stderr``,
        …), ``best`` and ``config``."""
        return {
            "candidates": [c.to_dict() for c in self.candidates],
            "best": self.best.to_dict(),
            "config": {
                "target_mu": self.target_mu,
                "target_epsilon": self.target_epsilon,
                "delta": self.delta,
                "horizon": self.horizon,
                "arms": self.arms,
                "env": self.env,
                "reps": self.reps,
                "seed": self.seed,
                "regret": "pseudo (sum of gaps of the played arms) at the horizon; ranked by its mean",
                "elapsed_seconds": self.elapsed,
            },
        }


def _run_one(
    b: int, c: float, env: Environment, horizon: int, reps: int, seed: int, checkpoints: np.ndarray
) -> SimulationResult:
    return simulate(GaussianTS(b=b, c=c), env, horizon, reps, seed, checkpoints=checkpoints, progress=False,
                    ledgers=False)  # fmt: skip


def _simulate_pairs(
    pairs: Sequence[tuple[int, float]],
    env: Environment,
    T: int,
    reps: int,
    seed: int,
    ck: np.ndarray,
    executor: Executor | None,
    progress: bool,
    batch: bool,
) -> list[SimulationResult]:
    """Simulate every (b, c) with the same seed (common random numbers)."""
    if batch:
        rep_chunk = None
        if executor is not None:
            workers = getattr(executor, "_max_workers", None)
            workers = workers if isinstance(workers, int) and workers >= 1 else 2
            rep_chunk = max(1, math.ceil(reps / workers))
        return simulate_many(
            [GaussianTS(b=b, c=c) for b, c in pairs],
            env,
            T,
            reps,
            seed,
            checkpoints=ck,
            executor=executor,
            rep_chunk=rep_chunk,
            progress=progress,
            ledgers=False,
        )
    return run_tasks(_run_one, [(b, c, env, T, reps, seed, ck) for b, c in pairs], executor=executor,
                     progress=progress, desc="tune", unit="cand")  # fmt: skip


def _candidate(
    b: int, c: float, mu: float, sim: SimulationResult, T: int, N: int, half: int, ck: np.ndarray
) -> Candidate:
    cfg = ThompsonConfig(T, N, b, c)
    pm = sim.mean("pseudo")
    return Candidate(
        b=b,
        c=c,
        mu=cfg.mu_tight,
        mu_paper=cfg.mu_paper,
        regret_mean=sim.final("pseudo"),
        regret_stderr=float(sim.stderr("pseudo")[-1]),
        empirical_mean=sim.final("empirical"),
        empirical_stderr=float(sim.stderr("empirical")[-1]),
        late_slope=float((pm[-1] - pm[half]) / max(1, T - int(ck[half]))),
        on_frontier=cfg.mu_tight >= mu * (1 - 1e-9),
    )


def refine_prepulls(tried: Sequence[int], best: int, bmax: int, points: int = 2) -> list[int]:
    """New b values strictly between the best b's neighbours among ``tried``, log-spaced
    (a bracketing step: the regret is assumed unimodal in log b around the best grid point).

    >>> refine_prepulls([0, 1, 3, 11, 38, 129], 11, 16666)
    [5, 7, 17, 25]
    >>> refine_prepulls([0, 1, 2], 1, 2)
    []
    """
    ts = sorted(set(tried))
    k = ts.index(best)
    lo, hi = ts[max(k - 1, 0)], ts[min(k + 1, len(ts) - 1)]
    if hi == best:
        hi = min(bmax, max(best + 1, 2 * best))
    out: set[int] = set()
    for a, z in ((lo, best), (best, hi)):
        if z - a < 2:
            continue
        grid = np.geomspace(max(a, 1), z, points + 2)[1:-1] if a >= 1 else np.linspace(a, z, points + 2)[1:-1]
        out |= {int(round(x)) for x in grid}
    return sorted(b for b in out if b not in ts and 0 <= b <= bmax)


def tune_thompson(
    env: Environment,
    horizon: int,
    *,
    target_mu: float | None = None,
    target_epsilon: float | None = None,
    delta: float | None = None,
    reps: int = 10,
    seed: int = 0,
    prepulls: Sequence[int] | None = None,
    num: int = 10,
    refine: int = 2,
    executor: Executor | None = None,
    progress: bool = True,
    batch: bool = True,
) -> TuningResult:
    """Simulate (b, c) on the certified frontier of ``target_mu`` (or of ``target_epsilon`` at
    ``delta``) and rank them by mean pseudo-regret at ``horizon``.

    The grid (``prepulls``, default :func:`candidate_prepulls` with ``num`` points, plus the rule
    of thumb :func:`rule_of_thumb_prepulls`) is simulated first; then ``refine`` bracketing
    rounds (:func:`refine_prepulls`) simulate new b between the best grid point's neighbours,
    with the same seed, so every comparison is paired (common random numbers).

    Args:
        executor: anything with ``submit`` (results are identical with and without it). With
            ``batch``, the repetitions are split into one task per worker; without, every
            candidate is a task.
        progress: a tqdm bar (stderr).
        batch: simulate the candidates together with :func:`~bandits.engine.simulator.simulate_many`
            (several times faster); ``False`` simulates each separately. Bit-identical results.
    """
    mu = resolve_target_mu(target_mu, target_epsilon, delta)
    if not isinstance(env, Environment):
        raise ValueError(f"env must be a bandits.environments.Environment, got {type(env).__name__}")
    T = check_integer("horizon", horizon, 2)
    reps = check_integer("reps", reps, 1)
    seed = check_integer("seed", seed, 0)
    refine = check_integer("refine", refine, 0)
    N = env.n_arms
    if prepulls is None:
        bs = sorted(set(candidate_prepulls(T, N, mu, num)) | {rule_of_thumb_prepulls(T, N, mu)})
    else:
        bs = sorted({check_integer("prepulls", b, 0) for b in prepulls})
    late = max(1, (9 * T) // 10)
    ck = np.unique(np.append(log_checkpoints(T, 50), late))
    half = int(np.searchsorted(ck, late))
    start = time.perf_counter()
    found: dict[int, tuple[Candidate, SimulationResult]] = {}
    for step in range(refine + 1):
        if step:
            best = min(found.values(), key=lambda cs: cs[0].regret_mean)[0].b
            bs = refine_prepulls(list(found), best, max_prepulls(T, N, mu))
            if not bs:
                break
        pairs = [budget_pair(T, N, mu, b) for b in bs]
        for (b, c), sim in zip(
            pairs, _simulate_pairs(pairs, env, T, reps, seed, ck, executor, progress, batch)
        ):
            found[b] = (_candidate(b, c, mu, sim, T, N, half, ck), sim)
    elapsed = time.perf_counter() - start
    order = sorted(found)
    return TuningResult(
        target_mu=mu,
        horizon=T,
        arms=N,
        env=env.spec,
        reps=reps,
        seed=seed,
        candidates=tuple(found[b][0] for b in order),
        simulations=tuple(found[b][1] for b in order),
        elapsed=elapsed,
        target_epsilon=None if target_epsilon is None else float(target_epsilon),
        delta=None if delta is None else float(delta),
    )


def plot_tuning(
    results: TuningResult | Sequence[TuningResult], path: str | None = None, *, curves: bool = True
) -> Any:
    """Regret at T against b (one line per result, 95 % t-intervals of the mean), and, with ``curves``, the
    regret curves of every candidate of the first result. Saves to ``path`` if given; returns
    the matplotlib Figure.

    >>> from bandits import parse_env
    >>> res = tune_thompson(parse_env("bernoulli:0.75,0.5"), 500, target_mu=2.0, reps=2, num=3,
    ...                     progress=False)
    >>> import matplotlib.pyplot as plt
    >>> fig = plot_tuning(res)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    import matplotlib
    from scipy import stats

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = [results] if isinstance(results, TuningResult) else list(results)
    if not rs:
        raise ValueError("results must contain at least one TuningResult")
    fig, axes = plt.subplots(1, 2 if curves else 1, figsize=(11.5 if curves else 6.4, 4.4), squeeze=False)
    ax = axes[0, 0]
    for i, r in enumerate(rs):
        bs = np.array([c.b for c in r.candidates])
        m = np.array([c.regret_mean for c in r.candidates])
        s = np.array([c.regret_stderr for c in r.candidates])
        half = float(stats.t.ppf(0.975, r.reps - 1)) * s if r.reps > 1 else 0.0 * s
        style = {**series_style(i, len(rs)), "marker": "o"}
        line = ax.errorbar(bs, m, yerr=half, capsize=3, label=f"μ = {r.target_mu:g}", **style)
        best = r.best
        ax.plot([best.b], [best.regret_mean], "*", ms=14, color=line[0].get_color())
    ax.set_xscale("symlog", linthresh=1)
    ax.set_yscale("log")
    ax.set_xlabel("pre-pulls b (c on the certified frontier)")
    ax.set_ylabel(f"pseudo-regret at T = {rs[0].horizon}")
    ax.set_title(f"{rs[0].env}\nT = {rs[0].horizon}, {rs[0].reps} reps (★ best)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if curves:
        ax2 = axes[0, 1]
        r = rs[0]
        for i, (cand, sim) in enumerate(zip(r.candidates, r.simulations)):
            lo, hi = sim.band("pseudo")
            (ln,) = ax2.plot(sim.checkpoints, sim.mean("pseudo"), label=f"b={cand.b}, c={cand.c:.3g}",
                             **series_style(i, len(r.candidates)))  # fmt: skip
            ax2.fill_between(sim.checkpoints, lo, hi, alpha=0.2, color=ln.get_color())
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("round t")
        ax2.set_ylabel("pseudo-regret")
        ax2.set_title(f"regret curves at μ = {r.target_mu:g}", fontsize=9)
        ax2.grid(True, which="both", alpha=0.3)
        ax2.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
