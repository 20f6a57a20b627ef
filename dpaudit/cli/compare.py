"""``dpaudit compare``: private bandit algorithms on one footing.

Each positional argument is one algorithm from ``dpaudit list`` with its own options, quoted
(``"lazy-dp-ts --epsilon 1"``); the environment, horizon, repetitions, seed, δ and audit size are
given once and shared. Every algorithm goes through the same pipeline as ``dpaudit run`` (declare
→ simulate → certify → check the ledgers → audit, :func:`bandits.run.run_algorithm`) with the same
root seed, so all of them see the same reward tables (common random numbers). The table puts
each one's regret beside its *certified* ε at the common δ, its unit of privacy, neighbouring
relation and trust model, and the paper's claim; the footing line says whether the certified
ε, the unit and the model agree — a regret ranking across different footings is reported with a
warning, never silently.

Exit status: 0 ok; 1 a privacy check failed for some algorithm (its audit is ``violated`` or
``model-mismatch``, or a run recorded releases its declaration does not cover); 2 bad input; 3 and 4
as every command (:mod:`dpaudit.cli.errors`).

Example (the error line goes to stderr; the return value is the exit status):
    >>> from dpaudit.cli.main import main
    >>> main(["compare", "ucb1 -T 10"])
    2
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from typing import Any

from dpaudit.cli.common import UsageError, check_simulation, emit_json, integer, number, plot_path
from dpaudit.cli.executors import add_parallel_options, parallel
from dpaudit.cli.run import (
    MAX_AUDIT_TRIALS,
    MAX_HORIZON,
    MAX_REPS,
    _alg_parser,
    _audit_horizon,
    _env,
    check_work,
)
from dpaudit.formatting import fmt_down, fmt_up

MAX_ALGORITHMS = 12
_SHARED = (
    "--env",
    "--horizon",
    "-T",
    "--reps",
    "-R",
    "--seed",
    "--delta",
    "--audit-trials",
    "--audit-horizon",
    "--workers",
    "--scheduler",
    "--json",
    "--plot",
)
_FOOTING_TOLERANCE = 1e-3  # relative spread of certified ε called "equal"
_FAILED_VERDICTS = ("violated", "model-mismatch")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="several algorithms on one instance and seed, privacy beside regret",
        description=__doc__.split("\n\n")[1].replace("\n", " ") if __doc__ else None,
    )
    p.add_argument(
        "entries",
        nargs="+",
        metavar='"ALG [OPTIONS]"',
        help="an algorithm from 'dpaudit list' with its own options, quoted (e.g. \"lazy-ucb --epsilon 1\")",
    )
    p.add_argument(
        "--env",
        metavar="SPEC",
        default=None,
        help="environment shared by all (default: the first algorithm's paper instance)",
    )
    p.add_argument(
        "--horizon",
        "-T",
        type=integer("--horizon", 2, MAX_HORIZON),
        default=None,
        help="rounds T (default: the first algorithm's)",
    )
    p.add_argument(
        "--reps", "-R", type=integer("--reps", 1, MAX_REPS), default=10, help="repetitions (default 10)"
    )
    p.add_argument(
        "--delta",
        type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
        default=1e-6,
        help="the delta at which every certified epsilon is reported (default 1e-6)",
    )
    p.add_argument(
        "--audit-trials",
        type=integer("--audit-trials", 0, MAX_AUDIT_TRIALS),
        default=0,
        help="neighbouring-run pairs for each algorithm's audit, 0 to skip (default 0)",
    )
    p.add_argument("--seed", type=integer("--seed", 0, 2**63 - 1), default=0, help="root seed (default 0)")
    add_parallel_options(p, "processes for each simulation")
    p.add_argument("--json", action="store_true", help="print one JSON object (no progress bars)")
    p.add_argument(
        "--plot", metavar="FILE.png", type=plot_path(), help="draw the regret curves of all algorithms"
    )
    p.set_defaults(handler=compare)


def _entries(args: argparse.Namespace) -> list[tuple[Any, list[str], str]]:
    """(spec, option tokens, label) per entry; shared options inside an entry are refused."""
    from bandits.registry import get

    if len(args.entries) > MAX_ALGORITHMS:
        raise UsageError(f"at most {MAX_ALGORITHMS} algorithms per comparison, got {len(args.entries)}")
    out = []
    for text in args.entries:
        try:
            tokens = shlex.split(text)
        except ValueError as exc:
            raise UsageError(f"algorithm entry {text!r}: {exc}") from None
        if not tokens:
            raise UsageError("an algorithm entry is empty")
        for t in tokens[1:]:
            if t.split("=", 1)[0] in _SHARED:
                raise UsageError(
                    f"algorithm entry {text!r}: {t.split('=', 1)[0]} is shared by all algorithms; "
                    "give it once, outside the quotes"
                )
        try:
            spec = get(tokens[0])
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out.append((spec, tokens[1:], " ".join(tokens)))
    return out


def _row(label: str, report: Any) -> dict[str, Any]:
    priv, reg = report.privacy.to_dict(), report.regret.to_dict()
    return {
        "algorithm": label,
        "privacy": {
            k: priv.get(k)
            for k in (
                "private",
                "model",
                "unit",
                "neighbouring",
                "guarantee",
                "mu",
                "delta",
                "epsilon",
                "epsilon_method",
                "published",
            )
        },
        "regret": {k: reg[k] for k in ("kind", "mean", "stderr", "empirical_mean", "empirical_stderr")},
        "ledger_check": {"ok": report.ledger_check.ok, "message": report.ledger_check.message},
        "audit": None
        if report.audit is None
        else {
            "verdict": report.audit.verdict,
            "epsilon_lower": report.audit.result.primary.empirical.epsilon_lower,
        },
    }


def footing(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the private algorithms are compared on one footing: the same certified ε at the
    common δ (within a relative 1e-3), the same unit of privacy, neighbouring relation and trust
    model. Non-private references are counted, not judged.

    >>> p = {"private": True, "epsilon": 1.0, "unit": "u", "neighbouring": "replace", "model": "central"}
    >>> r = {"privacy": p}
    >>> footing([r, r])["equal"]
    True
    """
    private = [r for r in rows if r["privacy"]["private"]]
    eps = [r["privacy"]["epsilon"] for r in private]
    notes = []
    finite = [e for e in eps if e is not None and math.isfinite(e)]
    if len(finite) < len(eps):
        notes.append("some certify no epsilon")
    spread = max(finite) / min(finite) if finite and min(finite) > 0 else None
    if spread is not None and spread > 1 + _FOOTING_TOLERANCE:
        notes.append(f"certified epsilons differ (largest/smallest {spread:.3g})")
    for key, what in (
        ("unit", "units of privacy"),
        ("neighbouring", "neighbouring relations"),
        ("model", "trust models"),
    ):
        values = sorted({str(r["privacy"][key]) for r in private})
        if len(values) > 1:
            notes.append(f"{what} differ ({', '.join(values)})")
    return {
        "equal": not notes,
        "epsilon_spread": spread,
        "notes": notes,
        "non_private_references": len(rows) - len(private),
    }


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def _table(rows: list[dict[str, Any]], delta: float) -> list[str]:
    best = min(r["regret"]["mean"] for r in rows)
    head = (
        "algorithm",
        f"certified eps (delta={delta:g})",
        "paper's eps",
        "privacy",
        "pseudo-regret",
        "x best",
        "ledgers",
        "audit",
    )
    body = []
    for r in rows:
        p, g = r["privacy"], r["regret"]
        pub = p["published"] or {}
        eps = (
            "none"
            if not p["private"]
            else "NOT PRIVATE"
            if p["epsilon"] is None
            else f"{fmt_up(p['epsilon'])} ({p['epsilon_method']})"
        )
        model = "-" if not p["private"] else f"{p['model']}, {p['neighbouring']} {p['unit']}"
        audit = (
            "-"
            if r["audit"] is None
            else f"{r['audit']['verdict']} (eps >= {fmt_down(r['audit']['epsilon_lower'], 3)})"
        )
        body.append(
            (
                r["algorithm"],
                eps,
                _fmt(pub.get("epsilon_at_delta", pub.get("epsilon"))),
                model,
                f"{g['mean']:.1f} ± {g['stderr']:.1f}",
                f"{g['mean'] / best:.2f}" if best > 0 else "-",
                "ok" if r["ledger_check"]["ok"] else "FAILED",
                audit,
            )
        )
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(b, widths)) for b in body]
    return lines


def compare(args: argparse.Namespace) -> int:
    entries = _entries(args)
    horizon, env_text, plans = _plans(args, entries)
    progress = not args.json and sys.stderr.isatty()
    reports, error = _run_all(args, plans, horizon, progress)
    if error is not None:
        print(error, file=sys.stderr)
        return 1
    rows = [_row(label, report) for label, report in reports]
    failed = any(r.audit is not None and r.audit.verdict in _FAILED_VERDICTS for _, r in reports)
    foot = footing(rows)
    if args.json:
        config = {
            "env": env_text,
            "horizon": horizon,
            "reps": args.reps,
            "seed": args.seed,
            "delta": args.delta,
            "audit_trials": args.audit_trials,
        }
        emit_json({"config": config, "results": rows, "footing": foot})
    else:
        _print_text(args, rows, foot, env_text, horizon)
    if args.plot:  # after the results are printed: a failing plot loses nothing computed
        sys.stdout.flush()
        _plot(reports, args.plot, env_text)
        if not args.json:
            print(f"plot written to {args.plot}")
    return 1 if failed else 0


def _plans(
    args: argparse.Namespace, entries: list[tuple[Any, list[str], str]]
) -> tuple[int, str, list[tuple[Any, str, Any, dict[str, Any], int]]]:
    """(horizon, environment text, one (spec, label, env, options, audit horizon) per entry):
    every entry is checked before any work starts."""
    first = entries[0][0]
    horizon = args.horizon if args.horizon is not None else first.default_horizon
    check_work(horizon, args.reps * len(entries), "--horizon x --reps x algorithms")
    env_text = args.env if args.env is not None else first.default_env
    shared = [
        "--env",
        env_text,
        "-T",
        str(horizon),
        "-R",
        str(args.reps),
        "--seed",
        str(args.seed),
        "--delta",
        repr(args.delta),
        "--audit-trials",
        str(args.audit_trials),
    ]
    plans = []
    for spec, tokens, label in entries:
        opts = _alg_parser(spec).parse_args(tokens + shared)
        if args.env is None and spec is not first:
            env = _default_env(spec, first, env_text, label)
        else:
            env = _env(spec, opts.env)
        check_simulation(horizon, args.reps * len(entries), env.n_arms, "--horizon x --reps x algorithms")
        algo = {o.dest: getattr(opts, o.dest) for o in spec.options}
        try:
            policy = spec.configure(algo, env, horizon).policy
        except ValueError as exc:
            raise UsageError(f"{label}: {exc}") from None
        plans.append((spec, label, env, algo, _audit_horizon(spec, policy, opts, env)))
    return horizon, env_text, plans


def _default_env(spec: Any, first: Any, env_text: str, label: str) -> Any:
    """The first algorithm's default instance, parsed for ``spec``; an algorithm that cannot run
    on it is refused with what to do (the user gave no ``--env`` to blame)."""
    try:
        return _env(spec, env_text)
    except UsageError as exc:
        why = str(exc).removeprefix("--env: ")
        raise UsageError(
            f"{label} cannot run on the instance of the first algorithm ({first.key}: {env_text}): {why}; "
            "give --env with an instance every algorithm accepts"
        ) from None


def _run_all(
    args: argparse.Namespace,
    plans: list[tuple[Any, str, Any, dict[str, Any], int]],
    horizon: int,
    progress: bool,
) -> tuple[list[tuple[str, Any]], str | None]:
    """(label, report) of every plan in order, through the ``dpaudit run`` pipeline with the same
    root seed; or, when a run recorded releases its declaration does not cover, the error line."""
    from bandits.run import run_algorithm
    from dpaudit.declaration import LedgerCheckError

    reports: list[tuple[str, Any]] = []
    par = parallel(args)
    executor = par.executor
    try:
        for spec, label, env, algo, ta in plans:
            try:
                report = run_algorithm(
                    spec.key,
                    env,
                    horizon,
                    reps=args.reps,
                    seed=args.seed,
                    delta=args.delta,
                    audit_trials=args.audit_trials,
                    audit_horizon=ta,
                    executor=executor,
                    progress=progress,
                    **algo,
                )
            except LedgerCheckError as exc:
                return reports, f"dpaudit: privacy check failed for {label}: {exc}"
            except ValueError as exc:  # e.g. no audit pair fits the horizon
                raise UsageError(f"{label}: {exc}") from None
            reports.append((label, report))
    finally:
        par.close()
    return reports, None


def _print_text(
    args: argparse.Namespace, rows: list[dict[str, Any]], foot: dict[str, Any], env_text: str, horizon: int
) -> None:
    """The comparison as text: a header, the table and the footing line."""
    print(
        f"{len(rows)} algorithms on {env_text}, T = {horizon}, {args.reps} repetitions, seed {args.seed} "
        "(common random numbers: the same reward tables for all)"
    )
    print("\n".join(_table(rows, args.delta)))
    refs = foot["non_private_references"]
    refs_txt = f"; plus {refs} non-private reference(s)" if refs else ""
    if foot["equal"]:
        print(
            "footing: one footing (the same certified epsilon, unit, neighbouring relation and "
            f"trust model){refs_txt}"
        )
    else:
        print(
            "footing: NOT one footing -- "
            + "; ".join(foot["notes"])
            + " (regret ranks are not comparable)"
            + refs_txt
        )


def _plot(reports: list[tuple[str, Any]], path: str, env_text: str) -> None:
    """Mean pseudo-regret of every algorithm with its t-quantile band, certified ε in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bandits.plots import draw_regret, style_regret_axes
    from dpaudit.plotstyle import series_style

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (label, rep) in enumerate(reports):
        eps = rep.privacy.epsilon
        shown = f"{label} (eps {fmt_up(eps, 3)})" if eps is not None else label
        draw_regret(ax, rep.simulation, "pseudo", shown, series_style(i, len(reports)))
    style_regret_axes(ax, "pseudo-regret", f"{env_text} (common random numbers)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
