"""One leaderboard of every private stochastic K-armed bandit at the same *certified* privacy.

``python -m bandits.experiments.leaderboard [--full] [--json FILE] [--out DIR]`` runs Thompson
sampling with (b, c) tuned to the budget (Ou, Avella Medina & Cummings 2024), DP-TS-UCB with α
tuned to the budget (Hu, Huang, Zhang, Lécuyer & Hegde 2025), Lazy-DP-TS and Anytime-Lazy-UCB
(Hu, Huang, Mehta & Hegde 2024), DP-SE (Sajed & Sheffet 2019), AdaP-UCB and AdaP-KLUCB (Azize &
Basu 2022) through the ``dpaudit run`` pipeline (:func:`bandits.run.run_algorithm`: declare,
simulate, certify, check every ledger, optionally audit) with one root seed, so every algorithm
sees the same reward tables (common random numbers).

**One footing.** Each budget is a GDP μ. The GDP algorithms are tuned to that certified μ
(:func:`bandits.thompson.tuner.tune_thompson`, :func:`bandits.dp_ts_ucb.tuner.tune_dp_ts_ucb`, on
their own seed); the pure-ε algorithms run at ε = :func:`dpaudit.conversions.gdp_epsilon` (μ, δ =
10⁻⁶), the exact conversion, with δ = 0 — a pure ε-DP guarantee is at least as strong as (ε, 10⁻⁶).
Every cell reports the certified ε at δ = 10⁻⁶ *from the pipeline*, not the requested one; a row
whose certified ε is not the budget's (to 10⁻⁶ relative) says why. DP-TS-UCB's tuner works on a grid
of α where the integer sample budget φ leaves the certified μ below the target; the tuned φ and
first epoch are kept and α moved to the one that spends μ exactly
(:func:`bandits.dp_ts_ucb.tuner.exact_alpha`). A second table runs every algorithm at its *paper's*
accounting of the same ε (the ``paper's eps`` of ``dpaudit compare``).

Instances: the Bernoulli (§5.1, = Hu et al.'s setting 1) and truncated-exponential (§5.2)
instances of Ou, Avella Medina & Cummings (2024) and setting 2 of Hu et al. (2024). Reduced scale
by default (T = 2·10⁴, two instances, μ ∈ {1, 2}, 8 repetitions, no audit: well under a minute);
``--full`` is every instance, T = 10⁵ and 10⁶, μ ∈ {0.5, 1, 2}, 20 repetitions.

Example:
    >>> cfg = LeaderboardConfig(("bernoulli",), (2000,), (2.0,), reps=2, tuner_reps=2, tuner_candidates=2,
    ...                         algorithms=("lazy-ucb", "dp-se"), published=False)
    >>> board = run_leaderboard(cfg)
    >>> [(r.algorithm, r.footing) for r in board.cells[0].rows]
    [('lazy-ucb', 'ok'), ('dp-se', 'ok')]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bandits.environments import Environment, parse_env
from dpaudit.conversions import gdp_epsilon
from dpaudit.validation import check_integer

__all__ = [
    "ALGORITHMS", "INSTANCES", "REDUCED", "FULL", "LeaderboardConfig", "Row", "Cell", "Leaderboard",
    "run_leaderboard", "contenders", "winner", "winner_sentence", "markdown_table",
    "plot_instance", "main",
]  # fmt: skip

ALGORITHMS = ("ts", "dp-ts-ucb", "lazy-dp-ts", "lazy-ucb", "dp-se", "adap-ucb", "adap-klucb")
"""Every registered private stochastic K-armed bandit (``dpaudit list``: feedback ``bandit``,
private); RNM-FTNL and naive FTNL are full-information, the others combinatorial or cascading."""
GDP = ("ts", "dp-ts-ucb")
LABELS = {"ts": "Thompson sampling (b, c)", "dp-ts-ucb": "DP-TS-UCB", "lazy-dp-ts": "Lazy-DP-TS",
          "lazy-ucb": "Anytime-Lazy-UCB", "dp-se": "DP-SE", "adap-ucb": "AdaP-UCB",
          "adap-klucb": "AdaP-KLUCB"}  # fmt: skip
INSTANCES = {
    "bernoulli": ("Bernoulli §5.1 (= Hu et al. setting 1)", "bernoulli:0.75,0.625,0.5,0.375,0.25"),
    "truncexp": ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10"),
    "hu-setting-2": ("Hu et al. setting 2", "bernoulli:0.5,0.4,0.4,0.4,0.4"),
}
"""(label, ``--env``): the first two are ``benchmarks/readme_tables.py``'s TUNING instances, the
last is :data:`bandits.lazy.spec.SETTING_2` (setting 1 is the §5.1 instance; tested)."""
DELTA = 1e-6
EQUAL = 1e-6  # relative tolerance of "the certified ε is the budget's"
MAX_HORIZON = 10_000_000
MAX_BUDGET = 50.0


@dataclass(frozen=True)
class LeaderboardConfig:
    """What to run; ``ValueError`` naming the parameter and its range on bad input."""

    instances: tuple[str, ...]
    horizons: tuple[int, ...]
    budgets: tuple[float, ...]
    reps: int
    tuner_reps: int
    tuner_candidates: int
    seed: int = 0
    tuner_seed: int = 1000
    audit_trials: int = 0
    algorithms: tuple[str, ...] = ALGORITHMS
    published: bool = True
    scale: str = "custom"

    def __post_init__(self) -> None:
        for name in self.instances:
            if name not in INSTANCES:
                raise ValueError(f"instances must be among {', '.join(INSTANCES)}, got {name!r}")
        for key in self.algorithms:
            if key not in ALGORITHMS:
                raise ValueError(f"algorithms must be among {', '.join(ALGORITHMS)}, got {key!r}")
        for T in self.horizons:
            if isinstance(T, bool) or not isinstance(T, int) or not 100 <= T <= MAX_HORIZON:
                raise ValueError(f"horizons must be integers in [100, {MAX_HORIZON}], got {T!r}")
        for mu in self.budgets:
            if not isinstance(mu, (int, float)) or not 0 < mu <= MAX_BUDGET:
                raise ValueError(f"budgets must be GDP mu in (0, {MAX_BUDGET:g}], got {mu!r}")
        if not (self.instances and self.horizons and self.budgets and self.algorithms):
            raise ValueError("instances, horizons, budgets and algorithms must each be non-empty")
        check_integer("reps", self.reps, 2)
        check_integer("tuner_reps", self.tuner_reps, 1)
        check_integer("tuner_candidates", self.tuner_candidates, 1)
        check_integer("seed", self.seed, 0)
        check_integer("tuner_seed", self.tuner_seed, 0)
        check_integer("audit_trials", self.audit_trials, 0)


REDUCED = LeaderboardConfig(("bernoulli", "truncexp"), (20_000,), (1.0, 2.0), reps=8, tuner_reps=3,
                            tuner_candidates=4, scale="reduced")  # fmt: skip
FULL = LeaderboardConfig(tuple(INSTANCES), (100_000, 1_000_000), (0.5, 1.0, 2.0), reps=20, tuner_reps=10,
                         tuner_candidates=10, audit_trials=20_000, scale="full")  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One algorithm in one cell: its options, certified and published privacy, regret, audit."""

    algorithm: str
    options: dict[str, Any]
    guarantee: str  # "gdp" or "pure"
    certified_mu: float | None
    certified_epsilon: float  # at δ = 10⁻⁶, from the pipeline
    epsilon_pure: float | None
    published_epsilon: float | None  # the paper's ε at δ = 10⁻⁶ (None: no published claim)
    published_source: str | None
    regret: float
    stderr: float
    finals: tuple[float, ...]
    ledger_ok: bool
    audit: str | None  # verdict, or None when not audited
    audit_epsilon_lower: float | None  # the outputs view's
    footing: str  # "ok", or why the certified ε is not the budget's
    seconds: float  # the pipeline run (simulate, certify, check, audit)
    tuning_seconds: float = 0.0  # the tuner, for ts and dp-ts-ucb
    audit_bounds: dict[str, float] | None = None  # every view's ε lower bound (rows run since it was kept)


@dataclass(frozen=True)
class Cell:
    """One (instance, T, μ): the rows at the certified budget and, if run, at the published one."""

    instance: str
    env: str
    horizon: int
    mu: float
    epsilon: float
    rows: tuple[Row, ...]
    published_rows: tuple[Row, ...] = ()

    @property
    def winner(self) -> str | None:
        return winner(self.rows)


@dataclass(frozen=True)
class Leaderboard:
    config: LeaderboardConfig
    cells: tuple[Cell, ...]
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "delta": DELTA, "seconds": self.seconds,
                "notes": list(self.notes), "cells": [asdict(c) | {"winner": c.winner} for c in self.cells],
                "sentences": {i: winner_sentence(self.cells, i) for i in self.config.instances},
                "published_sentences": {i: winner_sentence(self.cells, i, True) for i in self.config.instances
                                        if self.config.published}}  # fmt: skip


def _tuned_options(key: str, env: Environment, T: int, mu: float, cfg: LeaderboardConfig,
                   first_epochs: tuple[int, ...] | None = None) -> dict[str, Any]:  # fmt: skip
    """The options of ``dpaudit run KEY`` at the certified budget μ (module docstring); DP-TS-UCB's
    first epochs are the tuner's unless ``first_epochs`` fixes them."""
    if key == "ts":
        from bandits.thompson.frontier import candidate_prepulls
        from bandits.thompson.tuner import tune_thompson

        grid = candidate_prepulls(T, env.n_arms, mu, cfg.tuner_candidates)
        best = tune_thompson(env, T, target_mu=mu, reps=cfg.tuner_reps, seed=cfg.tuner_seed, prepulls=grid,
                             progress=False).best  # fmt: skip
        return {"prepulls": best.b, "target_mu": mu}  # c on the certified frontier at that b
    if key == "dp-ts-ucb":
        from bandits.dp_ts_ucb.tuner import FIRST_EPOCHS, exact_alpha, tune_dp_ts_ucb

        # the frontier search (`dpaudit tune dp-ts-ucb --frontier-only`) the stored leaderboards ran
        b = tune_dp_ts_ucb(env, T, target_mu=mu, reps=cfg.tuner_reps, seed=cfg.tuner_seed,
                           num=max(2, cfg.tuner_candidates), first_epochs=first_epochs or FIRST_EPOCHS,
                           below_frontier=False, progress=False).best  # fmt: skip
        if b.mu < mu * (1 - EQUAL):
            exact = exact_alpha(mu, T, b.samples, b.first_epoch)
            if exact is not None:
                return {"alpha": exact[0], "c0": exact[1], "first_epoch": b.first_epoch}
        return {"alpha": b.alpha, "c0": b.c0, "first_epoch": b.first_epoch}
    return {"epsilon": float(gdp_epsilon(mu, DELTA))}


def run_row(key: str, env: Environment, T: int, cfg: LeaderboardConfig, options: dict[str, Any],
            budget_epsilon: float) -> Row:  # fmt: skip
    """One ``dpaudit run`` pipeline call at the leaderboard's seed, as a row."""
    from bandits.run import run_algorithm

    t0 = time.perf_counter()
    rep = run_algorithm(key, env, T, reps=cfg.reps, seed=cfg.seed, delta=DELTA, audit_trials=cfg.audit_trials,
                        progress=False, **options)  # fmt: skip
    p = rep.privacy.to_dict()
    pub = p.get("published") or {}
    eps = float(p["epsilon"])
    finals = rep.simulation.pseudo_regret[:, -1]
    footing = "ok"
    if abs(eps - budget_epsilon) > EQUAL * budget_epsilon:
        footing = f"certified eps {eps:.6g} != budget {budget_epsilon:.6g}"
        if key == "dp-ts-ucb":
            footing = "below the budget: phi is an integer and no alpha in [0, 1] spends the budget exactly"
    audit = rep.audit
    return Row(
        algorithm=key, options=options, guarantee=str(p.get("guarantee") or "pure"),
        certified_mu=p.get("mu"), certified_epsilon=eps, epsilon_pure=p.get("epsilon_pure"),
        published_epsilon=pub.get("epsilon_at_delta", pub.get("epsilon")), published_source=pub.get("source"),
        regret=float(finals.mean()), stderr=float(finals.std(ddof=1) / math.sqrt(finals.size)),
        finals=tuple(float(x) for x in finals), ledger_ok=rep.ledger_check.ok,
        audit=None if audit is None else audit.verdict,
        audit_epsilon_lower=None if audit is None else audit.result.primary.empirical.epsilon_lower,
        footing=footing, seconds=time.perf_counter() - t0,
        audit_bounds=None if audit is None else _bounds(audit),
    )  # fmt: skip


def _bounds(audit: Any) -> dict[str, float]:
    """Every view's ε lower bound of a run's audit section: the outputs (the primary) and each
    further component (the releases, a mechanism's test) by its name."""
    parts = {"outputs": audit.result.primary, **audit.result.components}
    return {name: float(r.empirical.epsilon_lower) for name, r in parts.items()}


def _published_options(row: Row, env: Environment, T: int, mu: float, cfg: LeaderboardConfig
                       ) -> dict[str, Any] | None:  # fmt: skip
    """The options whose *paper's* ε is the budget's: the certified budget scaled by certified /
    published μ (Thompson sampling at its tuned b, DP-TS-UCB's α tuned again); None when the
    paper's ε is the certified one, or the paper states none."""
    if row.published_epsilon is None or row.certified_mu is None:
        return None
    from dpaudit.conversions import gdp_mu

    ratio = row.certified_mu / gdp_mu(row.published_epsilon, DELTA)
    if abs(ratio - 1) <= EQUAL:
        return None
    if row.algorithm == "ts":  # both of Theorem 4's mu and the certified mu scale as 1/sqrt(c)
        return {"prepulls": row.options["prepulls"], "target_mu": mu * ratio}
    if row.algorithm == "dp-ts-ucb":  # Theorem 4.4 is stated for a first epoch of one observation
        from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy

        paper = DPTSUCBPrivacy(T, row.options["alpha"], row.options["c0"], 1)
        return _tuned_options(row.algorithm, env, T, mu * paper.mu / paper.mu_paper, cfg, first_epochs=(1,))
    return _tuned_options(row.algorithm, env, T, mu * ratio, cfg)


def run_cell(cfg: LeaderboardConfig, instance: str, T: int, mu: float) -> Cell:
    """Every algorithm at the certified budget μ on one instance and horizon (and at the
    published budget when ``cfg.published``)."""
    spec = INSTANCES[instance][1]
    env = parse_env(spec)
    eps = float(gdp_epsilon(mu, DELTA))
    rows, published = [], []
    for key in cfg.algorithms:
        t0 = time.perf_counter()
        options = _tuned_options(key, env, T, mu, cfg)
        tuning = time.perf_counter() - t0
        row = replace(run_row(key, env, T, cfg, options, eps), tuning_seconds=tuning)
        rows.append(row)
        if cfg.published:
            opts = _published_options(row, env, T, mu, cfg)
            if opts is None:
                published.append(row)
            else:
                pub = run_row(key, env, T, cfg, opts, eps)
                published.append(replace(pub, footing="at the paper's accounting of the budget"))
    return Cell(instance, spec, T, mu, eps, tuple(rows), tuple(published))


def run_leaderboard(cfg: LeaderboardConfig) -> Leaderboard:
    """Every (instance, T, μ) cell of ``cfg``, in order."""
    t0 = time.perf_counter()
    cells = tuple(run_cell(cfg, i, T, mu) for i in cfg.instances for T in cfg.horizons for mu in cfg.budgets)
    notes = (
        f"one footing: each budget is a GDP mu; GDP algorithms at that certified mu, pure-eps algorithms at "
        f"eps = the exact (eps, delta) conversion of mu at delta = {DELTA:g}, with delta = 0",
        f"common random numbers: every algorithm runs with root seed {cfg.seed} (the same reward tables); "
        f"the tuners use seed {cfg.tuner_seed}",
        "audit: " + (f"{cfg.audit_trials} trials per algorithm (dpaudit run's audit)" if cfg.audit_trials
                     else "skipped at this scale (verdict column '-')"),
    )  # fmt: skip
    return Leaderboard(cfg, cells, time.perf_counter() - t0, notes)


# ---------------------------------------------------------------------------------------
# the verdicts and the table


def paired_se(a: Sequence[float], b: Sequence[float]) -> float:
    """The standard error of the mean of a − b over paired (common-random-number) runs (0 for one).

    >>> paired_se([1.0, 2.0, 4.0], [0.0, 1.0, 2.0])
    0.3333333333333333
    """
    d = np.asarray(a, float) - np.asarray(b, float)
    return float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else math.hypot(0.0, 0.0)


def contenders(rows: Sequence[Row]) -> list[str]:
    """The lowest-regret algorithm and every one within 2 s.e. of it (paired over the
    common-random-number repetitions), lowest regret first."""
    best = min(rows, key=lambda r: r.regret)
    close = [r for r in rows if r is best or r.regret - best.regret <= 2 * paired_se(r.finals, best.finals)]
    return [r.algorithm for r in sorted(close, key=lambda r: r.regret)]


def winner(rows: Sequence[Row]) -> str | None:
    """The algorithm whose regret is lowest by more than 2 s.e. against every other one (paired
    over the common-random-number repetitions), or None (no clear winner).

    >>> r = lambda k, f: Row(k, {}, "pure", None, 1.0, 1.0, 1.0, None, float(np.mean(f)), 0.0, tuple(f),
    ...                      True, None, None, "ok", 0.0)
    >>> winner([r("a", (10, 12, 11)), r("b", (20, 21, 23))]), winner([r("a", (10, 12)), r("b", (12, 10))])
    ('a', None)
    """
    close = contenders(rows)
    return close[0] if len(close) == 1 else None


def winner_sentence(cells: Sequence[Cell], instance: str, published: bool = False) -> str:
    """One sentence: who wins on ``instance`` at each (T, μ), or "no clear winner" (and then
    the algorithms within 2 s.e. of the lowest regret); ``published``: among the runs at the
    papers' accounting."""
    mine = [c for c in cells if c.instance == instance]
    label = INSTANCES[instance][0]
    table = [c.published_rows if published else c.rows for c in mine]
    wins = [winner(rows) for rows in table]
    if wins and all(w == wins[0] for w in wins) and wins[0] is not None:
        return f"{label}: {LABELS[wins[0]]} wins in every cell (lowest regret by more than 2 s.e.)."
    parts = []
    for c, rows in zip(mine, table):
        close = contenders(rows)
        what = (f"{LABELS[close[0]]} wins" if len(close) == 1 else
                "no clear winner (" + ", ".join(LABELS[k] for k in close) + " within 2 s.e.)")  # fmt: skip
        parts.append(f"T = {c.horizon}, μ = {c.mu:g}: {what}")
    return f"{label}: " + "; ".join(parts) + "."


def _audit_text(r: dict[str, Any]) -> str:
    """The audit verdict with its ε lower bound (every view's, for rows that kept them), or "-"
    when not audited."""
    from dpaudit.formatting import fmt_down

    if r["audit"] is None:
        return "-"
    views = r.get("audit_bounds")
    if views and len(views) > 1:
        return r["audit"] + " (" + ", ".join(f"{k} ε ≥ {fmt_down(v, 3)}" for k, v in views.items()) + ")"
    low = r["audit_epsilon_lower"]
    return r["audit"] + ("" if low is None else f" (ε ≥ {fmt_down(low, 3)})")


def _fmt_eps(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def markdown_table(data: dict[str, Any], published: bool = False, changed_only: bool = False) -> str:
    """The leaderboard as Markdown, from :meth:`Leaderboard.to_dict` (as stored in the JSON):
    one row per (instance, T, μ, algorithm); ``published=True`` for the runs at the papers'
    accounting (certified ε beside the paper's), ``changed_only`` keeping the algorithms whose
    paper's ε is not the certified one (× best is still against every algorithm)."""
    key = "published_rows" if published else "rows"
    head = (
        "| instance | T | μ (ε at δ = 10⁻⁶) | algorithm | "
        + ("paper's ε | certified ε" if published else "certified ε")
        + " | pseudo-regret | × best | audit |"
    )
    lines = [head, "|---|---:|---:|---|" + ("---:|" * (2 if published else 1)) + "---:|---:|---|"]
    for c in data["cells"]:
        rows = c[key]
        best = min(r["regret"] for r in rows) if rows else 0.0
        for r in rows:
            if changed_only and r["footing"] == "ok":
                continue
            eps = _fmt_eps(r["certified_epsilon"]) + ("" if r["footing"] == "ok" else " ‡")
            eps = f"{_fmt_eps(r['published_epsilon'])} | {eps}" if published else eps
            name = LABELS[r["algorithm"]]
            name = f"**{name}**" if not published and c["winner"] == r["algorithm"] else name
            where = f"{INSTANCES[c['instance']][0]} | {c['horizon']} | {c['mu']:g} ({c['epsilon']:.4f})"
            lines.append(f"| {where} | {name} | {eps} | {r['regret']:.0f} ± {r['stderr']:.0f} | "
                         f"{r['regret'] / best if best > 0 else 1:.2f} | {_audit_text(r)} |")  # fmt: skip
    return "\n".join(lines)


def plot_instance(data: dict[str, Any], instance: str, out: Path) -> Path:
    """Regret against certified ε on one instance, one line per algorithm (one panel per T)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpaudit.plotstyle import series_style

    cells = [c for c in data["cells"] if c["instance"] == instance]
    horizons = sorted({c["horizon"] for c in cells})
    fig, axes = plt.subplots(1, len(horizons), figsize=(6 * len(horizons), 4.2), squeeze=False)
    algs = list(data["config"]["algorithms"])
    for ax, T in zip(axes[0], horizons):
        mine = sorted((c for c in cells if c["horizon"] == T), key=lambda c: c["mu"])
        for i, key in enumerate(algs):
            pts = [next(r for r in c["rows"] if r["algorithm"] == key) for c in mine]
            x = [p["certified_epsilon"] for p in pts]
            ax.errorbar(x, [p["regret"] for p in pts], yerr=[2 * p["stderr"] for p in pts], marker="o",
                        capsize=3, label=LABELS[key], **series_style(i, len(algs)))  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"certified epsilon at delta = {DELTA:g}")
        ax.set_title(f"{INSTANCES[instance][0]}, T = {T}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel(f"pseudo-regret at T (± 2 s.e., {data['config']['reps']} runs)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = out / f"leaderboard_{instance}_{data['config']['scale']}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """The command (module docstring); exit status 0, or 2 on bad input."""
    from bandits.experiments.figures import figures_dir
    from bandits.experiments.notebook_runner import default_out

    p = argparse.ArgumentParser(
        prog="python -m bandits.experiments.leaderboard", description=(__doc__ or "").split("\n\n")[0]
    )
    p.add_argument(
        "--full", action="store_true", help="every instance, T = 1e5 and 1e6, mu 0.5, 1, 2, 20 runs, audited"
    )
    p.add_argument("--json", metavar="FILE", default=None,
                   help="the JSON of every result (default: leaderboard_SCALE.json in --out)")  # fmt: skip
    p.add_argument("--out", default=None, help="figures folder (default: DPAUDIT_FIGURES_DIR, else docs/img "
                   "with --full, else a temporary folder)")  # fmt: skip
    p.add_argument("--reps", type=int, default=None, help="repetitions (default: the scale's, >= 2)")
    p.add_argument("--horizons", type=int, nargs="+", default=None,
                   help="only these horizons (default: the scale's); the scale is named after them")
    args = p.parse_args(argv)
    base = FULL if args.full else REDUCED
    change: dict[str, Any] = {} if args.reps is None else {"reps": args.reps}
    if args.horizons is not None:
        change |= {"horizons": tuple(args.horizons),
                   "scale": f"{base.scale}-T" + "-".join(str(T) for T in args.horizons)}
    try:
        cfg = LeaderboardConfig(**(asdict(base) | change))
    except ValueError as exc:
        print(f"leaderboard: {exc}", file=sys.stderr)
        return 2
    if args.json is not None and not Path(args.json).resolve().parent.is_dir():
        print(f"leaderboard: --json: the folder of {args.json} does not exist", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else figures_dir() or default_out("leaderboard", args.full)
    out.mkdir(parents=True, exist_ok=True)
    board = run_leaderboard(cfg)
    data = json.loads(json.dumps(board.to_dict()))
    print(f"scale: {cfg.scale}; {len(board.cells)} cells in {board.seconds:.1f} s\n" + "\n".join(board.notes))
    print("\nat the certified budget (‡: certified eps differs from the budget's; the JSON says why)\n")
    print(markdown_table(data))
    for i in cfg.instances:
        print("* " + winner_sentence(board.cells, i))
    if cfg.published:
        print("\nat the published budgets (each algorithm at its paper's accounting of the same eps)\n")
        print(markdown_table(data, published=True))
        for i in cfg.instances:
            print("* " + winner_sentence(board.cells, i, published=True))
    figs = [plot_instance(data, i, out) for i in cfg.instances]
    path = Path(args.json) if args.json is not None else out / f"leaderboard_{cfg.scale}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"results written to {path}")
    print("figures written to " + ", ".join(str(f) for f in figs))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
