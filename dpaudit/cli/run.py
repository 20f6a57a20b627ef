"""``dpaudit list``, ``dpaudit run ALG`` and ``dpaudit tune ts``: private bandit algorithms end to end.

``dpaudit list`` shows every registered algorithm (:mod:`bandits.registry`) with its paper,
feedback model, privacy model and unit of privacy. ``dpaudit run ALG`` simulates it, certifies
its declared privacy under every accounting method (the paper's claim beside it), checks every
repetition's recorded releases against the declaration, and audits it
(:func:`bandits.run.run_policy`). With no ``--env`` an algorithm runs its paper's headline
instance. ``dpaudit tune ts`` enumerates (b, c) on the certified frontier of a target μ (or ε at
δ) and ranks them by simulated regret (:func:`bandits.thompson.tuner.tune_thompson`).

The command line is parsed in two stages so that ``dpaudit --help`` imports nothing heavy:
``run`` takes ``ALG`` and hands the rest to a parser built from that algorithm's options.

Exit status: 0 ok; 1 a privacy check failed (the audit's verdict is ``violated`` or
``model-mismatch`` — the implementation is not the mechanism that was certified —, or a run
recorded releases its declaration does not cover); 2 bad input (one line, no traceback); 3 the
environment failed, 4 an internal error (:mod:`dpaudit.cli.errors`).

Example (the error line goes to stderr; the return value is the exit status):
    >>> from dpaudit.cli.main import main
    >>> main(["run", "ts", "--reps", "-1"])
    2
    >>> main(["run", "nosuch"])
    2
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpaudit.cli.common import (  # noqa: F401  (the limits are re-exported for callers of this module)
    MAX_ARM_ROUNDS,
    MAX_ARMS,
    MAX_AUDIT_TRIALS,
    MAX_FLOOR_WORK,
    MAX_HORIZON,
    MAX_REPS,
    MAX_WORK,
    Parser,
    UsageError,
    check_simulation,
    emit_json,
    integer,
    number,
    plot_path,
)
from dpaudit.cli.executors import add_parallel_options, parallel
from dpaudit.formatting import fmt_up
from dpaudit.papers import OU_2024


def check_work(horizon: int, reps: int, what: str = "--horizon x --reps", limit: int = MAX_WORK,
               advice: str = "use fewer rounds or repetitions") -> None:  # fmt: skip
    """Refuse a simulation of more than ``limit`` (:data:`MAX_WORK`) rounds up front, with the estimate."""
    if horizon * reps > limit:
        raise UsageError(
            f"{what} = {horizon * reps:.3g} rounds, more than the limit {limit:.0e} "
            f"(hours of simulation on this machine); {advice}"
        )


DEFAULT_REPS = 10

def register(sub: argparse._SubParsersAction) -> None:
    run_p = sub.add_parser(
        "run",
        help="simulate, certify, check and audit an algorithm from 'dpaudit list'",
        description="dpaudit run ALG [options]: 'dpaudit run ALG --help' lists the options of ALG.",
    )
    run_p.add_argument("alg", metavar="ALG", nargs="?", default=None,
                       help="an algorithm key from 'dpaudit list' (e.g. ts, ucb1)")
    run_p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    run_p.set_defaults(handler=run_alg)
    list_p = sub.add_parser(
        "list", help="every algorithm 'dpaudit run' knows, with its paper and privacy model"
    )
    list_p.add_argument("--json", action="store_true", help="print one JSON object")
    list_p.set_defaults(handler=list_algs)
    _register_tune(sub)


# ---------------------------------------------------------------------------------------
# dpaudit list


def list_algs(args: argparse.Namespace) -> int:
    from bandits.registry import algorithms

    specs = [s.summary() for _, s in sorted(algorithms().items())]
    if args.json:
        emit_json({"algorithms": specs})
        return 0
    cols = ("key", "paper", "feedback", "privacy", "unit")
    rows = [[str(s[c] if s[c] is not None else "-") for c in cols] for s in specs]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r, s in zip(rows, specs):
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
        print(f"    {s['title']}")
    print("\n'dpaudit run ALG --help' lists an algorithm's options and gives its paper in full.")
    return 0


# ---------------------------------------------------------------------------------------
# dpaudit run ALG


def _alg_parser(spec: Any) -> Parser:
    p = Parser(
        prog=f"dpaudit run {spec.key}",
        description=f"{spec.title}. Paper: {spec.paper or 'none.'} Feedback: {spec.feedback.value}; "
        f"privacy: {spec.privacy}"
        + (f" per {spec.unit}" if spec.unit else "")
        + f". With no --env: {spec.default_env}, T = {spec.default_horizon}.",
    )
    p.add_argument("--env", metavar="SPEC", default=None, help=f"environment (default {spec.default_env})")
    p.add_argument(
        "--horizon",
        "-T",
        type=integer("--horizon", 2, MAX_HORIZON),
        default=spec.default_horizon,
        help=f"rounds T (default {spec.default_horizon})",
    )
    p.add_argument(
        "--reps",
        "-R",
        type=integer("--reps", 1, MAX_REPS),
        default=DEFAULT_REPS,
        help=f"repetitions (default {DEFAULT_REPS})",
    )
    p.add_argument(
        "--delta",
        type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
        default=1e-6,
        help="report epsilon at this delta; an algorithm with its own delta has an option (default 1e-6)",
    )
    p.add_argument(
        "--audit-trials",
        type=integer("--audit-trials", 0, MAX_AUDIT_TRIALS),
        default=spec.default_audit_trials,
        help=f"neighbouring-run pairs for the audit, 0 to skip (default {spec.default_audit_trials})",
    )
    p.add_argument(
        "--audit-floor",
        choices=("auto", "reference", "algorithm"),
        default="auto",
        help="the detection floor that decides 'inconclusive': measured on this algorithm's own "
        "noise-scaled runs ('algorithm', many times the audit's cost, then kept on disk), a reference "
        "pair's ('reference'), or ('auto', the default) a measured floor kept for this configuration and "
        "code, at any --seed (every default configuration has one shipped), else the reference floor",
    )
    p.add_argument(
        "--audit-horizon",
        type=integer("--audit-horizon", 2, MAX_HORIZON),
        default=None,
        help="horizon of the audited runs (default: the algorithm's choice, at most --horizon)",
    )
    _output_options(p, "processes for the simulation and the audit", "draw the regret curves")
    for o in spec.options:
        flags = [f"--{o.name}"] + ([o.short] if o.short else [])
        default_txt = "" if o.default is None or "default" in o.help else f" (default {o.default})"
        if o.kind is bool:
            p.add_argument(*flags, dest=o.dest, action="store_true", help=o.help)
        elif o.choices:
            p.add_argument(
                *flags, dest=o.dest, choices=o.choices, default=o.default, help=o.help + default_txt
            )
        elif o.kind is int:
            low = 0 if o.low is None else int(o.low)
            p.add_argument(
                *flags,
                dest=o.dest,
                type=integer(f"--{o.name}", low),
                default=o.default,
                help=o.help + default_txt,
            )
        elif o.kind is float:
            p.add_argument(
                *flags,
                dest=o.dest,
                default=o.default,
                help=o.help + default_txt,
                type=number(f"--{o.name}", o.low, o.high, low_open=o.low_open, high_open=o.high_open),
            )
        else:
            p.add_argument(*flags, dest=o.dest, default=o.default, help=o.help + default_txt)
    return p


def _output_options(p: argparse.ArgumentParser, workers_help: str, plot_help: str) -> None:
    """--seed, --workers, --scheduler, --json, --plot: the options ``run`` and ``tune`` share."""
    p.add_argument("--seed", type=integer("--seed", 0, 2**63 - 1), default=0, help="root seed (default 0)")
    add_parallel_options(p, workers_help)
    p.add_argument("--json", action="store_true", help="print one JSON object (no progress bars)")
    p.add_argument("--plot", metavar="FILE.png", type=plot_path(), help=plot_help)


def _env(spec: Any, text: str | None) -> Any:
    parse = spec.env_parser
    if parse is None:
        from bandits.environments import parse_env as parse
    try:
        return parse(spec.default_env if text is None else text)
    except ValueError as exc:
        raise UsageError(f"--env: {exc}") from None


def _audit_horizon(spec: Any, policy: Any, args: argparse.Namespace, env: Any) -> int:
    T = args.horizon
    if args.audit_horizon is not None:
        if args.audit_horizon > T:
            raise UsageError(
                f"--audit-horizon must be in [2, {T}] (at most --horizon), got {args.audit_horizon}"
            )
        Ta = args.audit_horizon
    elif spec.default_audit_horizon is not None and args.audit_trials:  # unused without an audit
        Ta = spec.default_audit_horizon(policy, T, env.n_arms)
    else:
        Ta = T
    if args.audit_trials:
        more = int(getattr(policy, "release_trials", 1))  # the releases view's multiple of the trials
        runs, also = 2 * args.audit_trials * more, f" x {more} (the releases view)" if more > 1 else ""
        check_work(Ta, runs, f"audit horizon x 2 --audit-trials{also}")
        if args.audit_floor == "algorithm":
            from bandits.auditing.leak_floor import FLOOR_RUNS_PER_TRIAL

            per = spec.floor_runs_per_trial or FLOOR_RUNS_PER_TRIAL
            check_work(Ta, per * args.audit_trials * more, "audit horizon x the measured "
                       f"floor's runs (up to {per} x {more} x --audit-trials)", MAX_FLOOR_WORK,
                       "use fewer --audit-trials or --audit-floor auto")  # fmt: skip
        if Ta * runs * env.n_arms > MAX_ARM_ROUNDS:
            raise UsageError(
                f"audit horizon x 2 --audit-trials{also} x arms = {Ta} x {runs} x {env.n_arms} = "
                f"{Ta * runs * env.n_arms:.3g} arm-rounds, more than the limit "
                f"{MAX_ARM_ROUNDS:.0e}; use fewer --audit-trials or a shorter --audit-horizon"
            )
        try:
            policy.declare(Ta, env.n_arms, env.structure)
        except ValueError as exc:
            raise UsageError(f"--audit-horizon {Ta}: {exc}") from None
    return Ta


def _preparse(rest: list[str]) -> None:
    """Check the options every algorithm shares (sizes, --plot) before the registry (numpy,
    SciPy, numba: seconds) is imported, so that their refusals are instant; the algorithm's own
    parser then parses everything again. No abbreviations here: a prefix could be an
    algorithm's own option."""
    p = Parser(prog="dpaudit run ALG", add_help=False, allow_abbrev=False)
    p.add_argument("--horizon", "-T", type=integer("--horizon", 2, MAX_HORIZON))
    p.add_argument("--reps", "-R", type=integer("--reps", 1, MAX_REPS))
    p.add_argument("--audit-trials", type=integer("--audit-trials", 0, MAX_AUDIT_TRIALS))
    p.add_argument("--audit-horizon", type=integer("--audit-horizon", 2, MAX_HORIZON))
    p.add_argument("--delta", type=number("--delta", 0.0, 1.0, low_open=True, high_open=True))
    p.add_argument("--seed", type=integer("--seed", 0, 2**63 - 1))
    p.add_argument("--workers", type=integer("--workers", 1, 64))
    p.add_argument("--scheduler")
    p.add_argument("--plot", type=plot_path())
    known, _ = p.parse_known_args(rest)
    if known.horizon is not None and known.reps is not None:
        check_work(known.horizon, known.reps)
    if known.horizon is not None and known.audit_horizon is not None and known.audit_horizon > known.horizon:
        raise UsageError(
            f"--audit-horizon must be in [2, {known.horizon}] (at most --horizon), got {known.audit_horizon}"
        )


def run_alg(args: argparse.Namespace) -> int:
    if args.alg is None:
        raise UsageError("run needs ALG, an algorithm key from 'dpaudit list' (e.g. 'dpaudit run ts')")
    if "-h" not in args.rest and "--help" not in args.rest:
        _preparse(args.rest)
    from bandits.registry import get

    spec = get(args.alg)
    opts = _alg_parser(spec).parse_args(args.rest)
    check_work(opts.horizon, opts.reps)
    env = _env(spec, opts.env)
    check_simulation(opts.horizon, opts.reps, env.n_arms)
    algo = {o.dest: getattr(opts, o.dest) for o in spec.options}
    policy = spec.configure(algo, env, opts.horizon).policy
    Ta = _audit_horizon(spec, policy, opts, env)
    from bandits.run import run_algorithm
    from dpaudit.declaration import LedgerCheckError
    progress = not opts.json and sys.stderr.isatty()
    par = parallel(opts)
    executor = par.executor
    try:
        report = run_algorithm(
            spec.key,
            env,
            opts.horizon,
            reps=opts.reps,
            seed=opts.seed,
            delta=opts.delta,
            audit_trials=opts.audit_trials,
            audit_horizon=Ta,
            audit_floor=opts.audit_floor,
            executor=executor,
            progress=progress,
            **algo,
        )
    except LedgerCheckError as exc:
        print(f"dpaudit: privacy check failed: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a configuration the checks above cannot see (e.g. no audit pair fits T)
        raise UsageError(str(exc)) from None
    finally:
        par.close()
    if opts.json:
        emit_json(report.to_dict())
    else:
        print(report)
    if opts.plot:  # after the results are printed: a failing plot loses nothing computed
        from bandits.plots import plot_run

        sys.stdout.flush()
        plot_run(report, opts.plot)
        if not opts.json:
            print(f"plot written to {opts.plot}")
    failed = report.audit is not None and report.audit.verdict in ("violated", "model-mismatch")
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------
# dpaudit tune ts


def _register_tune(sub: argparse._SubParsersAction) -> None:
    tune_p = sub.add_parser("tune", help="choose the parameters of a private algorithm at a fixed budget")
    tune_kinds = tune_p.add_subparsers(
        dest="kind", required=True, metavar="SUBCOMMAND", parser_class=type(tune_p)
    )
    tt = tune_kinds.add_parser("ts", help="(b, c) of Gaussian Thompson sampling on the certified frontier")
    target = tt.add_mutually_exclusive_group(required=True)
    target.add_argument("--target-mu", type=number("--target-mu", 0.0, low_open=True), help="GDP budget mu")
    target.add_argument(
        "--target-epsilon",
        type=number("--target-epsilon", 0.0, low_open=True),
        help="(epsilon, delta) budget: epsilon (needs --delta)",
    )
    tt.add_argument(
        "--delta",
        type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
        default=None,
        help="with --target-epsilon: the delta of the (epsilon, delta) budget",
    )
    tt.add_argument(
        "--horizon",
        "-T",
        type=integer("--horizon", 2, MAX_HORIZON),
        default=100_000,
        help="rounds (default 100000)",
    )
    tt.add_argument(
        "--arms",
        "-N",
        type=integer("--arms", 2, MAX_ARMS),
        default=None,
        help="number of arms (default: from --env; without --env, Bernoulli means "
        "evenly spaced from 0.75 to 0.25)",
    )
    tt.add_argument(
        "--env", metavar="SPEC", default=None,
        help=f"environment (default: the section 5.1 instance of {OU_2024.textual})",
    )
    tt.add_argument(
        "--reps",
        "-R",
        type=integer("--reps", 1, MAX_REPS),
        default=DEFAULT_REPS,
        help=f"repetitions (default {DEFAULT_REPS})",
    )
    tt.add_argument(
        "--candidates",
        type=integer("--candidates", 1, 200),
        default=10,
        help="number of b values, log-spaced from 0 to the largest feasible (default 10)",
    )
    _output_options(tt, "processes simulating candidates in parallel",
                    "draw regret against b and the regret curves")  # fmt: skip
    tt.set_defaults(handler=tune_ts)
    from dpaudit.cli.tune import register_dp_ts_ucb

    register_dp_ts_ucb(tune_kinds)


def _tune_env(spec_text: str | None, arms: int | None) -> Any:
    import numpy as np

    from bandits.environments import parse_env
    from bandits.thompson.spec import DEFAULT_ENV

    if spec_text is None:
        if arms is None or arms == 5:
            return parse_env(DEFAULT_ENV)
        return parse_env("bernoulli:" + ",".join(f"{m:.6g}" for m in np.linspace(0.75, 0.25, arms)))
    try:
        env = parse_env(spec_text)
    except ValueError as exc:
        raise UsageError(f"--env: {exc}") from None
    if arms is not None and arms != env.n_arms:
        raise UsageError(f"--arms must equal the number of arms of --env ({env.n_arms}), got {arms}")
    return env


def tune_ts(args: argparse.Namespace) -> int:
    from bandits.thompson.frontier import max_prepulls, min_target_mu, resolve_target_mu
    from bandits.thompson.tuner import plot_tuning, tune_thompson

    if args.target_epsilon is not None and args.delta is None:
        raise UsageError("--target-epsilon needs --delta in (0, 1)")
    if args.target_mu is not None and args.delta is not None:
        raise UsageError("--delta is only used with --target-epsilon")
    env = _tune_env(args.env, args.arms)
    check_simulation(args.horizon, args.reps * args.candidates * 2, env.n_arms,
                     "--horizon x --reps x (2 --candidates)")  # fmt: skip
    mu = resolve_target_mu(args.target_mu, args.target_epsilon, args.delta)
    if mu < min_target_mu(args.horizon):
        given = "--target-mu" if args.target_mu is not None else "--target-epsilon at --delta (as GDP mu)"
        raise UsageError(
            f"{given} must be at least {min_target_mu(args.horizon):.3g} at --horizon {args.horizon} "
            f"(a smaller budget needs a variance scale above 1e300), got {mu:g}"
        )
    bmax = max_prepulls(args.horizon, env.n_arms, mu)
    par = parallel(args)
    executor = par.executor
    try:
        res = tune_thompson(
            env,
            args.horizon,
            target_mu=args.target_mu,
            target_epsilon=args.target_epsilon,
            delta=args.delta,
            reps=args.reps,
            seed=args.seed,
            num=args.candidates,
            executor=executor,
            progress=not args.json and sys.stderr.isatty(),
        )
    finally:
        par.close()
    if args.json:
        emit_json(res.to_dict())
    else:
        _print_tuning(args, res, env, mu, bmax)
    if args.plot:  # after the results are printed: a failing plot loses nothing computed
        sys.stdout.flush()
        plot_tuning(res, args.plot)
        if not args.json:
            print(f"plot written to {args.plot}")
    return 0


def _print_tuning(args: argparse.Namespace, res: Any, env: Any, mu: float, bmax: int) -> None:
    target = f"mu = {mu:.6g}"
    if args.target_epsilon is not None:
        target += f" (largest mu meeting epsilon = {args.target_epsilon:g} at delta = {args.delta:g})"
    print(
        f"(b, c) on the certified frontier {target}; T = {args.horizon}, N = {env.n_arms}, "
        f"{args.reps} reps, seed {args.seed} (same for every candidate), {env.spec}"
    )
    print(f"b ranges over 0..{bmax} (largest b with c >= 1); ranked by pseudo-regret at T")
    print(res.table())
    best = res.best
    print(
        f"best: b = {best.b}, c = {best.c:.6g} (certified mu = {fmt_up(best.mu)}), "
        f"pseudo-regret {best.regret_mean:.1f} ± {best.regret_stderr:.1f}; took {res.elapsed:.1f} s"
    )
