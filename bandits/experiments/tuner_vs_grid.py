"""Is ``dpaudit tune dp-ts-ucb`` beaten by a dense grid at the same certified budget?

``python -m bandits.experiments.tuner_vs_grid [--full] [--mu M ...] [--json FILE]`` runs the tuner
(:func:`bandits.dp_ts_ucb.tuner.tune_dp_ts_ucb`) in both its modes with the command's settings —
``--frontier-only`` (α on 11 points of [0, 1] times first epochs f ∈ {1, 4, 16, 64}, c₀ giving the
most samples φ* the budget allows, 10 runs on the seed, 3 leaders confirmed on 40 runs of the next
seed) and the default (every φ of 1, 2, 3, 5, … up to φ* too, f ∈ {1, 2, 4, …, 64}, three
confirmation stages) — and, on the *same* seed and runs (common random numbers), a dense grid of
every DP-TS-UCB configuration that meets the budget: α on 21 points (the tuner's 11 among them),
f ∈ {1, 2, 4, …, 64}, and for each (α, f) every sampling budget φ on a geometric ladder from 1 up
to φ* (Hu, Huang, Zhang, Lécuyer & Hegde 2025, "Connecting Thompson Sampling and UCB: Towards More
Efficient Trade-offs Between Privacy and Regret", ICML 2025; the certified μ = sqrt(φ/(f·ln^α T))
of :mod:`dpaudit.analyses.dp_ts_ucb` is at most the target for every one). The grid's
configurations are a superset of both tuners' candidates.

**The verdict.** The grid's best mean on the seed is biased low (the minimum of hundreds of noisy,
heavy-tailed means: a configuration with few samples per epoch mean looks best on the runs where no
arm got stuck), so the seed only screens, in stages on disjoint runs (successive halving): the
seed's ``screen`` leaders (the tuners' picks left out) run again on 4 × ``reps`` runs of
``seed + 1``; the ``contenders`` leaders there and the tuners' picks (so that each tuner also faces
the other's pick) run on ``holdout_reps`` fresh runs of ``seed + 100`` (no tuner uses it), paired
(common random numbers). A tuner is *beaten
beyond the noise* when some contender's mean pseudo-regret on the hold-out runs is lower than its
pick's by more than z standard errors of the paired differences, z the one-sided normal quantile
at ``level`` / the number of contenders (Bonferroni: a family-wise level of ``level``; z = 2.64
for 10 leaders and 2 picks at 5 %). The hold-out is large (2000 runs) because the regret of DP-TS-UCB is
heavy-tailed: a good configuration leaves about one run in several hundred on a suboptimal arm
for most of the horizon, which adds about T·Δ_min to that run, and a few hundred runs can miss
that tail entirely. The check also confirms that the searches saw the same runs: every tuner
candidate's regret on the seed equals, bit for bit, that of the same configuration in the grid.

Reduced scale by default (T = 5000, a few configurations, seconds); ``--full`` is T = 10⁵ on the
Bernoulli instance of ``dpaudit run dp-ts-ucb`` (§5.1 of Ou, Avella Medina & Cummings 2024).

Example:
    >>> cfg = GridCheckConfig(horizon=600, reps=2, alphas=2, first_epochs=(1, 4), tuner_candidates=2,
    ...                       screen=3, contenders=2, holdout_reps=4)
    >>> check = run_check(cfg)
    >>> check.same_runs, len(check.grid) >= max(len(t.candidates) for t in check.tunings)
    (True, True)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from bandits.dp_ts_ucb.policy import DPTSUCB
from bandits.dp_ts_ucb.spec import DEFAULT_ENV
from bandits.dp_ts_ucb.tuner import (
    BELOW_RATIO,
    AlphaTuning,
    policies_within,
    sample_ladder,
    tune_dp_ts_ucb,
)
from bandits.engine.simulator import simulate_many
from bandits.environments import parse_env
from bandits.experiments.leaderboard import paired_se
from bandits.experiments.leaderboard_tails import stuck_limit
from dpaudit.formatting import fmt_up
from dpaudit.validation import check_integer, check_positive

__all__ = [
    "GridCheck",
    "GridCheckConfig",
    "GridPoint",
    "dense_grid",
    "main",
    "markdown_table",
    "run_check",
]


@dataclass(frozen=True)
class GridCheckConfig:
    """What the check runs (module docstring); the defaults are the full scale's but T."""

    env: str = DEFAULT_ENV
    horizon: int = 100_000
    target_mu: float = 1.0
    reps: int = 10
    seed: int = 0
    tuner_candidates: int = 11
    alphas: int = 21
    first_epochs: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    sample_ratio: float = 1.25
    screen: int = 400
    contenders: int = 10
    holdout_reps: int = 2000
    level: float = 0.05
    batch: int = 48

    def __post_init__(self) -> None:
        check_integer("horizon", self.horizon, 2)
        check_positive("target_mu", self.target_mu)
        for name in ("reps", "tuner_candidates", "alphas", "holdout_reps", "batch", "screen"):
            check_integer(name, getattr(self, name), 2 if name == "holdout_reps" else 1)
        check_integer("contenders", self.contenders, 1)
        if self.contenders > self.screen:
            raise ValueError(f"contenders must be at most screen = {self.screen}, got {self.contenders}")
        if not (isinstance(self.level, float) and 0.0 < self.level < 1.0):
            raise ValueError(f"level must be in (0, 1), got {self.level!r}")
        if not self.first_epochs:
            raise ValueError("first_epochs must name at least one first-epoch length, got ()")
        for f in self.first_epochs:
            check_integer("first_epochs", f, 1)
        if not (isinstance(self.sample_ratio, (int, float)) and self.sample_ratio > 1.0):
            raise ValueError(f"sample_ratio must be > 1, got {self.sample_ratio!r}")


REDUCED = GridCheckConfig(horizon=5000, reps=4, tuner_candidates=3, alphas=5, first_epochs=(1, 4, 16),
                          sample_ratio=2.0, screen=12, contenders=4, holdout_reps=40)  # fmt: skip
FULL = GridCheckConfig()


GRID_COLUMNS = ("alpha", "first_epoch", "samples", "regret_mean", "regret_stderr")
"""The columns of the stored grid (``GridCheck.to_dict``): c₀ and μ follow from (α, f, φ)."""


@dataclass(frozen=True)
class GridPoint:
    """One configuration's certified μ and its pseudo-regret at T (mean ± s.e.) on the seed."""

    alpha: float
    first_epoch: int
    samples: int
    c0: float
    mu: float
    regret_mean: float
    regret_stderr: float

    def key(self) -> tuple[float, int, int]:
        return (self.alpha, self.first_epoch, self.samples)

    def label(self) -> str:
        return f"alpha = {self.alpha:.4g}, f = {self.first_epoch}, phi = {self.samples}"


def dense_grid(target_mu: float, horizon: int, alphas: Sequence[float], first_epochs: Sequence[int],
               ratio: float) -> list[DPTSUCB]:  # fmt: skip
    """Every (α, f, φ) with φ on :func:`~bandits.dp_ts_ucb.tuner.sample_ladder` of ratio ``ratio``
    and of the tuner's ratio :data:`~bandits.dp_ts_ucb.tuner.BELOW_RATIO` (so that the grid holds
    every candidate of both tuners) up to the frontier φ*(α, f) of ``target_mu``
    (:func:`bandits.dp_ts_ucb.tuner.frontier_c0`), as policies configured for T = ``horizon``;
    every one certifies at most ``target_mu`` (checked).

    >>> [(p.alpha, p.first_epoch, p.privacy(2000).samples) for p in dense_grid(1.0, 2000, [0.0], [1, 4], 2.0)]
    [(0.0, 1, 1), (0.0, 4, 1), (0.0, 4, 2), (0.0, 4, 3), (0.0, 4, 4)]
    """
    def budgets(top: int) -> list[int]:
        return sorted({*sample_ladder(top, ratio), *sample_ladder(top, BELOW_RATIO)})

    return policies_within(target_mu, horizon, alphas, first_epochs, budgets)


TUNERS = ("dpaudit tune dp-ts-ucb --frontier-only", "dpaudit tune dp-ts-ucb")
"""The tuner modes the check runs, in the order of ``GridCheck.tunings``."""
HOLDOUT_SEED = 100
"""The hold-out runs' seed is ``seed + HOLDOUT_SEED``, disjoint from every seed the tuners and the
screen use (``seed`` to ``seed + 2``)."""


@dataclass(frozen=True)
class GridCheck:
    """The tuners' results, the grid on the same runs, and the paired hold-out of the contenders.

    ``tunings`` holds one :class:`AlphaTuning` per mode of :data:`TUNERS`; ``screened`` (grid
    index, mean, s.e.) on 4 × ``reps`` runs of ``seed + 1`` of the seed's leaders (the tuners'
    picks left out); ``contenders`` the grid indices of the leaders there and of the tuners' picks
    (a pick's difference to itself is 0: it cannot beat itself); ``holdout[k]`` the
    per-run pseudo-regrets at T of contender k on ``holdout_reps`` runs of ``seed + HOLDOUT_SEED``,
    and ``holdout_picks[m]`` those of tuner m's pick on the same runs."""

    config: GridCheckConfig
    tunings: tuple[AlphaTuning, ...]
    grid: tuple[GridPoint, ...]
    same_runs: bool
    screened: tuple[tuple[int, float, float], ...]
    contenders: tuple[int, ...]
    holdout_picks: tuple[tuple[float, ...], ...]
    holdout: tuple[tuple[float, ...], ...]
    seconds: float

    def pick(self, m: int = 0) -> GridPoint:
        """The grid point of tuner ``m``'s pick."""
        b = self.tunings[m].best
        return next(g for g in self.grid if g.key() == (b.alpha, b.first_epoch, b.samples))

    @property
    def grid_best_on_seed(self) -> GridPoint:
        return min(self.grid, key=lambda g: g.regret_mean)

    @property
    def z(self) -> float:
        """The one-sided Bonferroni critical value: Φ⁻¹(1 − level / number of contenders)."""
        return NormalDist().inv_cdf(1.0 - self.config.level / max(1, len(self.contenders)))

    def differences(self, m: int = 0) -> list[tuple[float, float]]:
        """Per contender: mean and s.e. of (contender − tuner m's pick) on the paired hold-out runs."""
        t = self.holdout_picks[m]
        return [(float(np.mean(np.subtract(runs, t))), paired_se(runs, t)) for runs in self.holdout]

    @property
    def best_contender(self) -> int:
        """The position (in ``contenders``) of the lowest mean on the hold-out runs."""
        return int(np.argmin([np.mean(r) for r in self.holdout]))

    def beaten(self, m: int = 0) -> bool:
        """Some contender beats tuner m's pick by more than z paired standard errors."""
        return any(d < -self.z * se for d, se in self.differences(m))

    def verdict(self, m: int = 0) -> str:
        k = self.best_contender
        d, se = self.differences(m)[k]
        g, t = self.grid[self.contenders[k]], self.pick(m)
        word = "BEATEN beyond the noise" if self.beaten(m) else "not beaten beyond the noise"
        return (f"{TUNERS[m]}: {word}: of the grid's {len(self.contenders)} contenders, the best on "
                f"{len(self.holdout_picks[m])} fresh paired runs ({g.label()}) minus the tuner's pick "
                f"({t.label()}): {d:+.1f} ± {se:.1f} pseudo-regret "
                f"(beaten below -{self.z:.2f} s.e.)")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        tuners = []
        for m, tuning in enumerate(self.tunings):
            runs = self.holdout_picks[m]
            tuners.append({
                "command": TUNERS[m], "tuning": _without_candidates(tuning.to_dict(), len(tuning.candidates)),
                "pick": asdict(self.pick(m)),
                "holdout": list(runs), "holdout_mean": float(np.mean(runs)),
                "differences": [{"mean": d, "stderr": se} for d, se in self.differences(m)],
                "beaten": self.beaten(m), "verdict": self.verdict(m),
            })  # fmt: skip
        return {
            "config": asdict(self.config),
            "tuners": tuners,
            "grid": {"columns": list(GRID_COLUMNS),  # c0 and μ follow from (α, f, φ): dense_grid
                     "rows": [[getattr(g, k) for k in GRID_COLUMNS] for g in self.grid]},
            "same_runs": self.same_runs,
            "screened": [{"point": i, "regret_mean": m, "regret_stderr": se} for i, m, se in self.screened],
            "grid_best_on_seed": asdict(self.grid_best_on_seed),
            "holdout": {
                "seed": self.config.seed + HOLDOUT_SEED, "z": self.z,
                "contenders": [{"point": i, **asdict(self.grid[i]), "runs": list(r),
                                "mean": float(np.mean(r))} for i, r in zip(self.contenders, self.holdout)],
                "best": self.best_contender,
            },
            "seconds": self.seconds,
        }  # fmt: skip


def _without_candidates(tuning: dict[str, Any], n: int) -> dict[str, Any]:
    """A tuning's JSON without its candidates (every one is a grid point with the same regret:
    ``same_runs``), their number instead."""
    return {"candidates": n, **{k: v for k, v in tuning.items() if k != "candidates"}}


def _points(pols: list[DPTSUCB], env: Any, cfg: GridCheckConfig, executor: Executor | None,
            progress: bool) -> list[GridPoint]:  # fmt: skip
    """The grid's regret on the seed, simulated ``cfg.batch`` policies at a time (the same runs as
    one call: every policy gets its own generators from the seed)."""
    T, out = cfg.horizon, []
    for k in range(0, len(pols), cfg.batch):
        part = pols[k : k + cfg.batch]
        sims = simulate_many(part, env, T, cfg.reps, cfg.seed, checkpoints=[T], executor=executor,
                             progress=progress, ledgers=False)  # fmt: skip
        for pol, sim in zip(part, sims, strict=True):
            p = pol.privacy(T)
            out.append(GridPoint(pol.alpha, pol.first_epoch, p.samples, pol.c0, p.mu, sim.final("pseudo"),
                                 float(sim.stderr("pseudo")[-1])))  # fmt: skip
    return out


def _same_runs(tuning: AlphaTuning, grid: list[GridPoint]) -> bool:
    """Every tuner candidate is in the grid with the same c₀ and the same regret, bit for bit."""
    by_key = {g.key(): g for g in grid}
    for c in tuning.candidates:
        g = by_key.get((c.alpha, c.first_epoch, c.samples))
        if g is None or g.c0 != c.c0 or g.regret_mean != c.regret_mean or g.regret_stderr != c.regret_stderr:
            return False
    return True


def run_check(cfg: GridCheckConfig = REDUCED, *, executor: Executor | None = None,
              progress: bool = False) -> GridCheck:  # fmt: skip
    """Run both tuners, the dense grid on the same seed and the paired hold-out of the grid's
    leaders against the tuners' picks (module docstring)."""
    t0 = time.perf_counter()
    env, T = parse_env(cfg.env), cfg.horizon
    tunings = tuple(tune_dp_ts_ucb(env, T, target_mu=cfg.target_mu, reps=cfg.reps, seed=cfg.seed,
                                   num=cfg.tuner_candidates, below_frontier=below, executor=executor,
                                   progress=progress) for below in (False, True))  # fmt: skip
    alphas = np.unique(np.concatenate([np.linspace(0.0, 1.0, cfg.alphas),
                                       np.linspace(0.0, 1.0, cfg.tuner_candidates)])).tolist()  # fmt: skip
    epochs = tuple(sorted({*cfg.first_epochs, *(c.first_epoch for t in tunings for c in t.candidates)}))
    pols = dense_grid(cfg.target_mu, T, alphas, epochs, cfg.sample_ratio)
    grid = _points(pols, env, cfg, executor, progress)
    picks = [next(i for i, g in enumerate(grid) if g.key() == (b.alpha, b.first_epoch, b.samples))
             for b in (t.best for t in tunings)]  # fmt: skip
    ranked = sorted((i for i in range(len(grid)) if i not in picks), key=lambda i: grid[i].regret_mean)
    screen = ranked[: cfg.screen]
    again = simulate_many([pols[i] for i in screen], env, T, 4 * cfg.reps, cfg.seed + 1, checkpoints=[T],
                          executor=executor, progress=progress, ledgers=False)  # fmt: skip
    screened = tuple((i, s.final("pseudo"), float(s.stderr("pseudo")[-1])) for i, s in zip(screen, again))
    lead = tuple(i for i, _, _ in sorted(screened, key=lambda c: c[1])[: cfg.contenders])
    contenders = (*lead, *dict.fromkeys(picks))  # each tuner also faces the other's pick
    final = simulate_many([pols[i] for i in contenders], env, T, cfg.holdout_reps, cfg.seed + HOLDOUT_SEED,
                          checkpoints=[T], executor=executor, progress=progress, ledgers=False)  # fmt: skip
    runs = {i: tuple(s.pseudo_regret[:, -1].tolist()) for i, s in zip(contenders, final)}
    same = all(_same_runs(t, grid) for t in tunings)
    return GridCheck(cfg, tunings, tuple(grid), same, screened, contenders, tuple(runs[i] for i in picks),
                     tuple(runs[i] for i in contenders), time.perf_counter() - t0)  # fmt: skip


def markdown_table(checks: Sequence[dict[str, Any]]) -> str:
    """One row per stored check (its ``to_dict``) and tuner: the budget, the grid's size, the
    tuner's pick, the grid's best on the seed, and on the hold-out runs the tuner's pick against the
    best contender (mean pseudo-regret at T, and how many runs stayed on a suboptimal arm:
    :func:`stuck_limit`)."""
    lines = ["| target μ | tuner | grid points | tuner's pick (α, f, φ): seed | grid's best on the seed "
             "| screened, contenders | hold-out runs | tuner's pick (stuck) | best contender (α, f, φ): mean "
             "(stuck) | contender − pick (± s.e.) | beaten? (below −z s.e.) |",
             "|---:|---|---:|---|---|---:|---:|---:|---|---:|---|"]  # fmt: skip
    for c in checks:
        s, h = c["grid_best_on_seed"], c["holdout"]
        k = h["contenders"][h["best"]]
        limit = stuck_limit(c["config"]["env"], c["config"]["horizon"])
        for tuner in c["tuners"]:
            t, d = tuner["pick"], tuner["differences"][h["best"]]
            flag = "`--frontier-only`" if "frontier-only" in tuner["command"] else "default"
            lines.append(
                f"| {c['config']['target_mu']:g} | {flag} | {len(c['grid']['rows'])} | "
                f"{_triple(t)}: {t['regret_mean']:.1f} ± {t['regret_stderr']:.1f} | "
                f"{_triple(s)}: {s['regret_mean']:.1f} ± {s['regret_stderr']:.1f} | "
                f"{len(c['screened'])}, {len(h['contenders'])} | {len(tuner['holdout'])} | "
                f"{tuner['holdout_mean']:.1f} ({sum(r > limit for r in tuner['holdout'])}) | "
                f"{_triple(k)}: {k['mean']:.1f} ({sum(r > limit for r in k['runs'])}) | "
                f"{d['mean']:+.1f} ± {d['stderr']:.1f} | "
                f"{'**yes**' if tuner['beaten'] else 'no'} (z = {h['z']:.2f}) |"
            )
    return "\n".join(lines)


def _triple(p: dict[str, Any]) -> str:
    return f"({p['alpha']:.4g}, {p['first_epoch']}, {p['samples']})"


def main(argv: Sequence[str] | None = None) -> int:
    """The command (module docstring); exit status 0, or 2 on bad input."""
    p = argparse.ArgumentParser(prog="python -m bandits.experiments.tuner_vs_grid",
                                description=(__doc__ or "").split("\n\n")[0])  # fmt: skip
    p.add_argument("--full", action="store_true", help="T = 1e5, the full grid (about 10 min per budget)")
    p.add_argument("--mu", type=float, nargs="+", default=[1.0], help="target GDP mu (default 1)")
    p.add_argument("--json", metavar="FILE", default=None, help="write every check's JSON here")
    p.add_argument("--workers", type=int, default=1, help="processes (1: serial)")
    args = p.parse_args(argv)
    if args.json is not None and not Path(args.json).resolve().parent.is_dir():
        print(f"tuner_vs_grid: --json: the folder of {args.json} does not exist", file=sys.stderr)
        return 2
    try:
        base = asdict(FULL if args.full else REDUCED)
        cfgs = [GridCheckConfig(**(base | {"target_mu": m})) for m in args.mu]
        check_integer("--workers", args.workers, 1)
    except ValueError as exc:
        print(f"tuner_vs_grid: {exc}", file=sys.stderr)
        return 2
    executor = None
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(args.workers)
    checks = []
    for cfg in cfgs:
        try:
            check = run_check(cfg, executor=executor, progress=sys.stderr.isatty())
        except ValueError as exc:
            print(f"tuner_vs_grid: --mu {cfg.target_mu:g}: {exc}", file=sys.stderr)
            return 2
        checks.append(json.loads(json.dumps(check.to_dict())))
        print(f"target mu = {cfg.target_mu:g} (certified mu of every point <= target; the largest: "
              f"{fmt_up(max(g.mu for g in check.grid))}): {len(check.grid)} grid points, same runs as the "
              f"tuners: {check.same_runs}; {check.seconds:.0f} s")  # fmt: skip
        for m in range(len(check.tunings)):
            print(f"  {check.verdict(m)}")
        if args.json is not None:  # after every budget: nothing computed is lost to a later failure
            Path(args.json).write_text(json.dumps({"checks": checks}, separators=(",", ":")) + "\n")
    print(markdown_table(checks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
