"""The numbers the README quotes in tables (and a few it repeats in prose), from the scripts that
make them: every table between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` and every
value between ``<!-- value:NAME -->`` and ``<!-- /value -->`` in README.md and docs/*.md is
rendered here from stored results, so a number that no longer reproduces cannot stay in the docs.

Tables and where their numbers come from:

==================  =========================================================================================
name                source
==================  =========================================================================================
``tuning``          ``dpaudit tune ts --target-mu M --env SPEC`` (T = 10⁵, 10 repetitions, seed 0) for six
                    (instance, μ), stored in ``docs/img/readme_tables.json`` by ``--run tuning``
``audits``          ``dpaudit run ALG --epsilon 1 -T 100000 -R 2 --audit-trials 20000`` for eight
                    configurations of Hu et al. (2024), stored by ``--run audits``
``hu-regret``       ``docs/img/private_stochastic_results.json`` (``python -m
``full-info``       bandits.experiments.private_stochastic_bandits --full``)
``figure5``
``cascading-1g``    ``docs/img/cascading_results.json`` (the cascading-bandits notebook at full scale)
``planted-bugs``    ``docs/img/planted_bugs.json`` (``python benchmarks/bench_planted_bugs.py --seeds 20
                    --json docs/img/planted_bugs.json``: every private algorithm at its default audit;
                    ``--only KEY ... --update`` re-runs some rows in place)
``audit-validity``  the ``none`` rows of the same file: the unbugged audits
``miss-oracle``     ``docs/img/miss_oracle.json`` (``python benchmarks/bench_miss_oracle.py --json
                    docs/img/miss_oracle.json``: the best single test on the missed bugs' worst pairs)
``dpsgd-*``         ``docs/img/dpsgd.json`` (``python benchmarks/bench_dpsgd.py --repeat 2 --json
                    docs/img/dpsgd.json``: the 36 DP-SGD cells and fixed-size batches against
                    dp-accounting, Opacus and prv-accountant)
``calibration``,    ``docs/img/calibration.json`` (``python benchmarks/bench_calibration.py --json
``incremental``     docs/img/calibration.json``)
``leaderboard``,    ``docs/img/leaderboard_reduced.json`` (``python -m bandits.experiments.leaderboard
``leaderboard-*``   --json docs/img/leaderboard_reduced.json --out docs/img``: every private stochastic
                    bandit at the same certified budget, reduced scale)
``leaderboard-t*``  ``docs/img/leaderboard_full-T100000.json`` (``leaderboard-t1e5-*``: ``--full --horizons
                    100000``) and ``leaderboard_full-T1000000.json`` (``leaderboard-t1e6-*``: 1000000)
``dp-ts-ucb-grid*`` ``docs/img/tuner_vs_grid.json`` (``python -m bandits.experiments.tuner_vs_grid --full
                    --mu 0.5 1 2 --workers 2 --json docs/img/tuner_vs_grid.json``: ``dpaudit tune
                    dp-ts-ucb`` against a dense grid on the same seed)
==================  =========================================================================================

Run from the repository root::

    python benchmarks/readme_tables.py                  # check: the docs show what the stored results say
    python benchmarks/readme_tables.py --write          # rewrite the docs from the stored results
    python benchmarks/readme_tables.py --run audits     # recompute (minutes), store, rewrite
    python benchmarks/readme_tables.py --run audits --check   # recompute and compare, store nothing

The suite runs the check (``tests/test_docs_tables.py``) and, marked ``slow``, the recomputation at
full scale of the audit table's RNM-FTNL row (deterministic: the same numbers to the digit); the
other rows and the tuning table take 5 minutes and are recomputed by ``--run audits tuning
--check``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repository's packages (benchmarks included)
    sys.path.insert(0, str(ROOT))
STORED = ROOT / "docs" / "img" / "readme_tables.json"
PRIVATE_STOCHASTIC = ROOT / "docs" / "img" / "private_stochastic_results.json"
CASCADING = ROOT / "docs" / "img" / "cascading_results.json"
PLANTED_BUGS = ROOT / "docs" / "img" / "planted_bugs.json"
MISS_ORACLE = ROOT / "docs" / "img" / "miss_oracle.json"
DPSGD = ROOT / "docs" / "img" / "dpsgd.json"
CALIBRATION = ROOT / "docs" / "img" / "calibration.json"
LEADERBOARD = ROOT / "docs" / "img" / "leaderboard_reduced.json"
LEADERBOARD_FULL = {  # tag of the values -> (stored run, how it ran)
    "t1e5": (ROOT / "docs" / "img" / "leaderboard_full-T100000.json",
             "at the lowest priority on the shared 2-core machine"),
    "t1e6": (ROOT / "docs" / "img" / "leaderboard_full-T1000000.json",
             "at nice 5 on a 2-core machine whose other core was mostly idle"),
}  # fmt: skip
TUNER_GRID = ROOT / "docs" / "img" / "tuner_vs_grid.json"
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

__all__ = ["TUNING", "AUDITS", "run_tuning", "run_audits", "render_all", "differences", "write", "main"]

# ---------------------------------------------------------------------------------------
# the command-backed tables

TUNING = (
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 1.0),
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 2.0),
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 5.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 1.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 2.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 5.0),
)
"""(label, --env, --target-mu) of each row of the tuning table."""

AUDITS = (
    ("`lazy-ucb`", "lazy-ucb"),
    ("`lazy-dp-ts`", "lazy-dp-ts"),
    ("`adap-ucb`", "adap-ucb"),
    ("`adap-klucb`", "adap-klucb"),
    ("`dp-se` (β = 10⁻⁵)", "dp-se"),
    ("`rnm-ftnl --env bernoulli:0.6,0.5`", "rnm-ftnl --env bernoulli:0.6,0.5"),
    ("`rnm-ftnl --env bernoulli:0.6,0.5 --noise corrected`",
     "rnm-ftnl --env bernoulli:0.6,0.5 --noise corrected"),
    ("`naive-ftnl --env bernoulli:0.6,0.5`", "naive-ftnl --env bernoulli:0.6,0.5"),
)  # fmt: skip
"""(label, ``dpaudit run`` arguments) of each row of the audit table (ε = 1, -T 100000 -R 2)."""
AUDIT_OPTIONS = ("--epsilon", "1", "-T", "100000", "-R", "2", "--audit-trials", "20000")
FULL = {"horizon": 100_000, "reps": 10, "audit_trials": 20_000, "audit_T": 100_000}
REDUCED = {"horizon": 3_000, "reps": 2, "audit_trials": 1_000, "audit_T": 3_000}


def run_tuning(scale: dict[str, int] = FULL) -> list[dict[str, Any]]:
    """One ``dpaudit tune ts --target-mu M --env SPEC --json`` per row of :data:`TUNING`."""
    rows = []
    for label, env, mu in TUNING:
        argv = ["tune", "ts", "--target-mu", f"{mu:g}", "--env", env, "-T", str(scale["horizon"]),
                "-R", str(scale["reps"])]  # fmt: skip
        data = _dpaudit_json(argv)
        zero = next(c for c in data["candidates"] if c["b"] == 0)
        best = data["best"]
        rows.append({"label": label, "env": env, "mu": mu, "b": best["b"], "c": best["c"],
                     "regret": best["regret_mean"], "stderr": best["regret_stderr"],
                     "b0_regret": zero["regret_mean"], "command": "dpaudit " + " ".join(argv)})  # fmt: skip
    return rows


def run_audits(scale: dict[str, int] = FULL, labels: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """One ``dpaudit run ALG --epsilon 1 -T 100000 -R 2 --audit-trials 20000 --json`` per row of
    :data:`AUDITS` (only the rows named in ``labels`` when given)."""
    options = list(AUDIT_OPTIONS)
    options[options.index("-T") + 1] = str(scale["audit_T"])
    options[options.index("--audit-trials") + 1] = str(scale["audit_trials"])
    rows = []
    for label, args in AUDITS:
        if labels is not None and label not in labels:
            continue
        argv = ["run", *args.split(), *options]
        data = _dpaudit_json(argv)
        a, p = data["audit"], data["privacy"]
        claim, said = a.get("published") or {}, a.get("published_verdict")
        rows.append({
            "label": label,
            "command": "dpaudit " + " ".join(argv),
            "audit_horizon": a["horizon"],
            "epsilon_lower": a["empirical"]["epsilon_lower"],
            "confidence": a["empirical"]["confidence"],
            "releases_lower": (a["details"].get("components", {}).get("releases") or {}).get("empirical", {})
            .get("epsilon_lower"),
            "certified": p["epsilon_pure"] if p["epsilon_pure"] is not None else p["epsilon"],
            "verdict": a["verdict"],
            "published_verdict": None if said is None else said.split(":")[0].lower(),
            "published_epsilon": claim.get("epsilon"),
            "published_source": claim.get("source"),
        })  # fmt: skip
    return rows


def _dpaudit_json(argv: list[str]) -> Any:
    import contextlib
    import io

    from dpaudit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--json"])
    if code not in (0, 1):
        raise RuntimeError(f"dpaudit {' '.join(argv)} failed ({code}): {err.getvalue().strip()}")
    return json.loads(out.getvalue())


# ---------------------------------------------------------------------------------------
# rendering


def _pm(mean: float, se: float) -> str:
    return f"{mean:.0f} ± {se:.0f}"


def render_tuning(rows: list[dict[str, Any]]) -> str:
    lines = ["| rewards | target μ | best (b, c) | its pseudo-regret | b = 0 (all budget in c) |",
             "|---|---:|---|---:|---:|"]  # fmt: skip
    for r in rows:
        ratio = r["b0_regret"] / r["regret"]
        best = f"({r['b']}, {r['c']:.3g}) | {_pm(r['regret'], r['stderr'])}"
        lines.append(f"| {r['label']} | {r['mu']:g} | {best} | {r['b0_regret']:.0f} ({ratio:.1f}×) |")
    return "\n".join(lines)


def _theorem(source: str | None) -> str:
    return "" if not source else source.split("), ")[-1] if "), " in source else source


def render_audits(rows: list[dict[str, Any]]) -> str:
    from dpaudit.formatting import fmt_down

    conf = {f"{100 * r.get('confidence', 0.95):g} %" for r in rows}
    lines = [f"| `dpaudit run ... --audit-trials 20000` (ε = 1) | audited T | ε lower bound: outputs, "
             f"releases ({', '.join(sorted(conf))} each) | certified ε | verdict | against the published ε |",
             "|---|---:|---:|---:|---|---|"]  # fmt: skip
    for r in rows:
        bad = r["published_verdict"] == "violated"
        low = fmt_down(r["epsilon_lower"], 3)
        rel = r.get("releases_lower")
        low = f"{low}, " + ("-" if rel is None else fmt_down(rel, 3))
        if r["published_verdict"] is None:
            against = "(none)"
        else:
            theorem = f", {_theorem(r['published_source'])}" if bad else ""
            against = f"{r['published_verdict']} ({r['published_epsilon']:g}{theorem})"
        low, against = (f"**{low}**", f"**{against}**") if bad else (low, against)
        lines.append(f"| {r['label']} | {r['audit_horizon']} | {low} | {r['certified']:g} | {r['verdict']} "
                     f"| {against} |")  # fmt: skip
    return "\n".join(lines)


def render_hu_regret(data: dict[str, Any]) -> str:
    from bandits.experiments.grid import _cell
    from bandits.experiments.private_stochastic_bandits import ALGS, EPSILONS, SETTINGS

    lines = ["| setting | ε | Anytime-Lazy-UCB | Lazy-DP-TS | DP-SE | AdaP-KLUCB |",
             "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for s in SETTINGS:
        for eps in EPSILONS:
            cells = [_cell(data["bandit_grid"]["table"], s, eps, a) for a in ALGS]
            best = min(c["mean"] for c in cells)
            shown = [_pm(c["mean"], c["se"]) for c in cells]
            shown = [f"**{s}**" if c["mean"] == best else s for s, c in zip(shown, cells)]
            lines.append(f"| {s} | {eps:g} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def render_full_info(data: dict[str, Any]) -> str:
    from bandits.experiments.full_information import FULL_INFO_ALGS, FULL_INFO_EPS

    rows = data["full_info"]["rows"]
    lines = ["| K | ε | RNM-FTNL, Lap(1/ε) (certified 2ε) | RNM-FTNL, Lap(2/ε) (certified ε) "
             "| naive FTNL, Lap(K/ε) |",
             "|---:|---:|---:|---:|---:|"]  # fmt: skip
    for K in sorted({r["K"] for r in rows}):
        for eps in FULL_INFO_EPS:
            by = {r["alg"]: r for r in rows if (r["K"], r["eps"]) == (K, eps)}
            cells = [by[a] for a in FULL_INFO_ALGS]
            lines.append(f"| {K} | {eps:g} | " + " | ".join(_pm(r["mean"], r["se"]) for r in cells) + " |")
    return "\n".join(lines)


def render_figure5(data: dict[str, Any]) -> str:
    lines = ["| ε (TS: μ-GDP at δ = 10⁻⁶) | TS (b, c) | modified TS | DP-SE | Anytime-Lazy-UCB "
             "| Lazy-DP-TS (not in the figure) |",
             "|---:|---|---:|---:|---:|---:|"]  # fmt: skip
    for p in data["figure5"]["panels"]:
        r = {x["alg"]: x for x in p["rows"]}
        cells = " | ".join(_pm(r[a]["mean"], r[a]["se"]) for a in ("ts", "dp-se", "lazy-ucb", "lazy-dp-ts"))
        lines.append(f"| {p['eps']:g} (μ = {p['mu']:.4g}) | ({p['b']}, {p['c']:.4g}) | {cells} |")
    return "\n".join(lines)


def render_cascading_1g(data: dict[str, Any]) -> str:
    """Figure 1(g)'s claim at the nominal ε: the private-counts variant with noise × 1."""
    finals = data["finals"]
    ls = sorted(int(k.split()[1]) for k in finals if k.startswith("items ") and k.endswith(" sound"))
    means = [next(x for x in finals[f"items {L} sound"] if "x0.01" not in x["policy"])["mean"] for L in ls]
    holds = all(a < b for a, b in zip(means, means[1:]))
    shown = ", ".join(f"{m:,.0f}".replace(",", " ") for m in means)
    return f"{'holds' if holds else '**does not hold**'} (private counts × 1: {shown}; L = {ls[0]}..{ls[-1]})"


def render_planted_bugs(data: dict[str, Any]) -> str:
    """The planted-bugs table of ``python benchmarks/bench_planted_bugs.py --json FILE`` (without
    its seconds per audit, which depend on the machine's load)."""
    from benchmarks.bench_planted_bugs import markdown

    return markdown(data["rows"], seconds=False).rstrip("\n")


def render_miss_oracle(data: dict[str, Any]) -> str:
    """The table of ``python benchmarks/bench_miss_oracle.py --json FILE``: what the best single
    test known in advance detects of each missed bug, and the runs it needs."""
    from dpaudit.formatting import fmt_up

    cols = ["algorithm", "bug", "worst pair at the bug's scale", "certified ε (μ)", "runs per side",
            "oracle detects", "runs for 50 % / 80 %"]  # fmt: skip
    out = ["| " + " | ".join(cols) + " |", "|---|---|---|---:|---:|---:|---|"]
    for r in data["rows"]:
        need = " / ".join("more than 10⁸" if v is None else f"{v:,}".replace(",", " ")
                          for v in (r["runs_for_half"], r["runs_for_80"]))  # fmt: skip
        out.append(f"| {r['algorithm']} | {r['bug']} | {r['model']} | {fmt_up(r['certified'], 4)} | "
                   f"{r['runs_per_side']} | {100 * r['oracle_detection']:.1f} % | {need} |")  # fmt: skip
    return "\n".join(out)


def _refuted_as_specified() -> set[str]:
    """The registered algorithms whose published guarantee is false as specified (the registry's
    privacy column says so): their audit is expected to fail without any bug."""
    from bandits.registry import algorithms

    return {k for k, s in algorithms().items() if s.privacy.startswith("not private")}


def planted_bugs_summary(data: dict[str, Any]) -> str:
    """Caught rows and false alarms of the planted-bugs run, in one sentence (each row with its
    own number of audit seeds)."""
    rows = data["rows"]
    broken = _refuted_as_specified() & {r["algorithm"] for r in rows}
    clean = [r for r in rows if r["bug"] == "none" and r["algorithm"] not in broken]
    mine = [r for r in rows if r["bug"] != "none" and r["algorithm"] not in broken]
    most = sum(r["caught"] >= 0.8 * r["seeds"] for r in mine)
    alarms, runs = sum(r["caught"] for r in clean), sum(r["seeds"] for r in clean)
    seeds = " or ".join(str(c) for c in sorted({r["seeds"] for r in rows}))
    return (f"{most} of {len(mine)} planted bugs caught in at least 80 % of their {seeds} audit seeds, "
            f"in the {len(clean)} algorithms whose guarantee holds as specified "
            f"(false alarms: {alarms} of {runs} unbugged runs); the {len(broken)} algorithms whose "
            "published guarantee the audit refutes without any bug are left out")


def validity_summary(data: dict[str, Any]) -> str:
    """False alarms of the unbugged audits (the ``none`` rows of the planted-bugs run) of the
    algorithms whose guarantee holds as specified, in one sentence."""
    broken = _refuted_as_specified()
    rows = [r for r in data["rows"] if r["bug"] == "none" and r["algorithm"] not in broken]
    runs, alarms = sum(r["seeds"] for r in rows), sum(r["caught"] for r in rows)
    worst = max(rows, key=lambda r: r["caught"])
    counts = sorted({r["seeds"] for r in rows})
    fewer = [r["algorithm"] for r in rows if r["seeds"] < counts[-1]]
    seeds = f"{counts[-1]} audit seeds" + (f" ({', '.join(fewer)}: {counts[0]})" if fewer else "")
    return (f"{alarms} of {runs} runs fail ({len(rows)} algorithms × {seeds}; "
            f"most in one algorithm: {worst['caught']})")


def _dpsgd_renderers(results: list[dict[str, Any]]) -> dict[str, Callable[[], str]]:
    from benchmarks import dpsgd_tables as t

    return {"dpsgd-cells": lambda: t.cells_table(results), "dpsgd-prv": lambda: t.prv_table(results),
            "dpsgd-fixed": lambda: t.fixed_table(results),
            "dpsgd-summary": lambda: t.readme_sentence(results)}


def _calibration_renderers(data: dict[str, Any]) -> dict[str, Callable[[], str]]:
    from benchmarks import dpsgd_tables as t

    return {"calibration": lambda: t.calibration_table(data),
            "calibration-summary": lambda: t.calibration_sentence(data),
            "incremental": lambda: t.incremental_table(data),
            "incremental-summary": lambda: t.incremental_sentence(data)}


def _leaderboard_renderers(data: dict[str, Any]) -> dict[str, Callable[[], str]]:
    from bandits.experiments import leaderboard as lb
    from bandits.experiments.leaderboard_tails import stuck_sentence

    cfg = data["config"]
    scale = (f"{cfg['scale']} scale: T = {', '.join(map(str, cfg['horizons']))}, {cfg['reps']} repetitions, "
             f"seed {cfg['seed']} (tuners: {cfg['tuner_reps']} repetitions, seed {cfg['tuner_seed']}); "
             f"{data['seconds']:.0f} s on one core")
    full = lb.FULL
    full_text = (f"{len(full.instances)} instances, T = {' and '.join(map(str, full.horizons))}, μ = "
                 f"{', '.join(f'{m:g}' for m in full.budgets)}, {full.reps} repetitions, audits of "
                 f"{full.audit_trials} trials")
    return {"leaderboard": lambda: lb.markdown_table(data),
            "leaderboard-published": lambda: lb.markdown_table(data, published=True, changed_only=True),
            "leaderboard-winners": lambda: " ".join(data["sentences"][i] for i in cfg["instances"]),
            "leaderboard-published-winners":
                lambda: " ".join(data["published_sentences"][i] for i in cfg["instances"]),
            "leaderboard-stuck": lambda: stuck_sentence(data),
            "leaderboard-scale": lambda: scale, "leaderboard-full": lambda: full_text}  # fmt: skip


def _leaderboard_full_renderers(data: dict[str, Any], tag: str, how: str) -> dict[str, Callable[[], str]]:
    """The full scale at one horizon (``--full --horizons 100000``: ``leaderboard-t1e5-*``;
    ``1000000``: ``leaderboard-t1e6-*``): its table, winners, runs stuck and scale."""
    from bandits.experiments import leaderboard as lb
    from bandits.experiments.leaderboard_tails import stuck_sentence

    cfg = data["config"]
    scale = (f"{len(cfg['instances'])} instances, T = {', '.join(map(str, cfg['horizons']))}, μ = "
             f"{', '.join(f'{m:g}' for m in cfg['budgets'])}, {cfg['reps']} repetitions, tuners "
             f"{cfg['tuner_reps']} repetitions × {cfg['tuner_candidates']} candidates, audits of "
             f"{cfg['audit_trials']} trials; {data['seconds'] / 60:.0f} min wall {how}")
    return {f"leaderboard-{tag}": lambda: lb.markdown_table(data),
            f"leaderboard-{tag}-published":
                lambda: lb.markdown_table(data, published=True, changed_only=True),
            f"leaderboard-{tag}-winners": lambda: " ".join(data["sentences"][i] for i in cfg["instances"]),
            f"leaderboard-{tag}-stuck": lambda: stuck_sentence(data),
            f"leaderboard-{tag}-scale": lambda: scale}


def _tuner_grid_renderers(checks: list[dict[str, Any]]) -> dict[str, Callable[[], str]]:
    from bandits.experiments.tuner_vs_grid import markdown_table

    def summary() -> str:
        def one(c: dict[str, Any]) -> str:
            best = c["holdout"]["best"]
            parts = []
            for t in c["tuners"]:
                d = t["differences"][best]
                flag = "`--frontier-only`" if "frontier-only" in t["command"] else "default"
                word = "**beaten**" if t["beaten"] else "not beaten"
                parts.append(f"{flag} {d['mean']:+.1f} ± {d['stderr']:.1f} ({word})")
            return f"μ = {c['config']['target_mu']:g}: " + ", ".join(parts)

        z = checks[0]["holdout"]["z"]
        return "; ".join(one(c) for c in checks) + f" (beaten below −{z:.2f} s.e.)"

    return {"dp-ts-ucb-grid": lambda: markdown_table(checks), "dp-ts-ucb-grid-summary": summary}


def _stored() -> dict[str, Any]:
    return json.loads(STORED.read_text()) if STORED.exists() else {}


def renderers() -> dict[str, Callable[[], str]]:
    """Every table and value by name, rendered from its stored results."""
    from benchmarks import perf_tables

    stored = _stored()
    ps = json.loads(PRIVATE_STOCHASTIC.read_text())
    cascading = json.loads(CASCADING.read_text())
    audits = stored.get("audits", [])
    bugs = json.loads(PLANTED_BUGS.read_text()) if PLANTED_BUGS.exists() else None
    oracle = json.loads(MISS_ORACLE.read_text()) if MISS_ORACLE.exists() else None
    dpsgd = json.loads(DPSGD.read_text()) if DPSGD.exists() else None
    cal = json.loads(CALIBRATION.read_text()) if CALIBRATION.exists() else None
    board = json.loads(LEADERBOARD.read_text()) if LEADERBOARD.exists() else None
    full_boards = {tag: (json.loads(path.read_text()), how)
                   for tag, (path, how) in LEADERBOARD_FULL.items() if path.exists()}  # fmt: skip
    grid = json.loads(TUNER_GRID.read_text())["checks"] if TUNER_GRID.exists() else None

    def audit_value(label: str) -> Callable[[], str]:
        from dpaudit.formatting import fmt_down

        return lambda: fmt_down(next(r for r in audits if r["label"] == label)["epsilon_lower"], 3)

    return {
        "tuning": lambda: render_tuning(stored["tuning"]),
        "audits": lambda: render_audits(audits),
        "hu-regret": lambda: render_hu_regret(ps),
        "full-info": lambda: render_full_info(ps),
        "figure5": lambda: render_figure5(ps),
        "cascading-1g": lambda: render_cascading_1g(cascading),
        "rnm-ftnl-audit": audit_value(AUDITS[5][0]),
        **({} if bugs is None else {
            "planted-bugs": lambda: render_planted_bugs(bugs),
            "planted-bugs-summary": lambda: planted_bugs_summary(bugs),
            "audit-validity": lambda: validity_summary(bugs),
        }),
        **({} if oracle is None else {"miss-oracle": lambda: render_miss_oracle(oracle)}),
        **({} if dpsgd is None else _dpsgd_renderers(dpsgd)),
        **({} if cal is None else _calibration_renderers(cal)),
        **({} if board is None else _leaderboard_renderers(board)),
        **{k: v for tag, (data, how) in full_boards.items()
           for k, v in _leaderboard_full_renderers(data, tag, how).items()},
        **({} if grid is None else _tuner_grid_renderers(grid)),
        **perf_tables.renderers(ROOT / "docs" / "img"),
    }  # fmt: skip


# ---------------------------------------------------------------------------------------
# the documents

TABLE = re.compile(r"(<!-- table:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- /table:(?P=name) -->)", re.S)
VALUE = re.compile(r"(<!-- value:(?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- /value -->)", re.S)


def render_all(text: str, rendered: dict[str, str]) -> str:
    """``text`` with every marked table and value replaced by its rendering."""

    def table(m: re.Match[str]) -> str:
        return m.group(1) + rendered[m.group("name")] + m.group(4)

    def value(m: re.Match[str]) -> str:
        return m.group(1) + rendered[m.group("name")] + m.group(4)

    return VALUE.sub(value, TABLE.sub(table, text))


def _rendered() -> dict[str, str]:
    return {name: fn() for name, fn in renderers().items()}


def differences(documents: tuple[Path, ...] = DOCUMENTS) -> list[str]:
    """Every marked table or value of ``documents`` that differs from its rendering (unknown
    names included), as ``path: name`` lines; empty when the docs show what the results say."""
    rendered = _rendered()
    out = []
    for path in documents:
        text = path.read_text()
        for pattern in (TABLE, VALUE):
            for m in pattern.finditer(text):
                name = m.group("name")
                if name not in rendered:
                    out.append(f"{path.relative_to(ROOT)}: unknown {name!r}")
                elif m.group("body") != rendered[name]:
                    out.append(f"{path.relative_to(ROOT)}: {name}")
    return out


def write(documents: tuple[Path, ...] = DOCUMENTS) -> list[Path]:
    """Rewrite every marked table and value of ``documents``; the paths that changed."""
    rendered = _rendered()
    changed = []
    for path in documents:
        text = path.read_text()
        new = render_all(text, rendered)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the docs from the stored results")
    ap.add_argument("--run", nargs="+", choices=("tuning", "audits"), default=(),
                    help="recompute these tables (minutes) and store their results")  # fmt: skip
    ap.add_argument("--check", action="store_true", help="with --run: compare with the stored results only")
    ap.add_argument("--reduced", action="store_true",
                    help="with --run: a reduced scale (smoke test; never stored)")  # fmt: skip
    args = ap.parse_args(argv)
    runs = {"tuning": run_tuning, "audits": run_audits}
    stored = _stored()
    for name in args.run:
        fresh = runs[name](REDUCED if args.reduced else FULL)
        if args.reduced:
            print(f"{name}: {len(fresh)} rows at reduced scale")
            continue
        if args.check:
            same = fresh == stored.get(name)
            print(f"{name}: {'reproduced to the digit' if same else 'DIFFERS from the stored results'}")
            if not same:
                return 1
            continue
        stored[name] = fresh
        STORED.write_text(json.dumps(stored, indent=1) + "\n")
        print(f"{name}: stored in {STORED.relative_to(ROOT)}")
    if args.check or args.reduced:
        return 0
    if args.write or args.run:
        for path in write():
            print(f"rewrote {path.relative_to(ROOT)}")
        return 0
    diff = differences()
    for line in diff:
        print(f"differs from its results: {line}")
    if not diff:
        print("every marked table and value shows its stored results")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
