"""Tables and sentences of the experiments' and audits' stored results (the tuning and audit
tables, the Hu et al. (2024) grid, the cascading figure, the planted bugs and the audit's miss
oracle, DP-SGD, calibration, the leaderboards and the DP-TS-UCB tuner against a grid), rendered
into the README and the docs by ``benchmarks/readme_tables.py``, whose docstring names the
script behind each; the performance benchmarks' are in ``benchmarks/perf_tables.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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


def dpsgd_renderers(results: list[dict[str, Any]]) -> dict[str, Callable[[], str]]:
    from benchmarks import dpsgd_tables as t

    return {"dpsgd-cells": lambda: t.cells_table(results), "dpsgd-prv": lambda: t.prv_table(results),
            "dpsgd-fixed": lambda: t.fixed_table(results),
            "dpsgd-summary": lambda: t.readme_sentence(results)}


def calibration_renderers(data: dict[str, Any]) -> dict[str, Callable[[], str]]:
    from benchmarks import dpsgd_tables as t

    return {"calibration": lambda: t.calibration_table(data),
            "calibration-summary": lambda: t.calibration_sentence(data),
            "incremental": lambda: t.incremental_table(data),
            "incremental-summary": lambda: t.incremental_sentence(data)}


def leaderboard_renderers(data: dict[str, Any]) -> dict[str, Callable[[], str]]:
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


def leaderboard_full_renderers(data: dict[str, Any], tag: str, how: str) -> dict[str, Callable[[], str]]:
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


def tuner_grid_renderers(checks: list[dict[str, Any]]) -> dict[str, Callable[[], str]]:
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
