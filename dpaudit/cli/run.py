"""``dpaudit run ts`` and ``dpaudit tune ts``: private Thompson sampling end to end.

``dpaudit run ts`` simulates Gaussian Thompson sampling with (b, c) (seed 004, Algorithm 2),
certifies its privacy and audits it. With no options it runs seed 004's §5.1 instance
(``bernoulli:0.75,0.625,0.5,0.375,0.25``, T = 10^5, 10 repetitions) at a budget of 1-GDP,
with b from :func:`bandits.tuner.rule_of_thumb_prepulls` (b = round(6·sqrt(T)/μ), capped so
that c ≥ 1) and c on the certified frontier. The audit runs the same (b, c) at a shorter
horizon (``--audit-horizon``, default b·N + 2000 rounds: all pre-pulls plus 2000 private
rounds) so the whole command stays under a minute; the output says what was audited.

``dpaudit tune ts`` enumerates (b, c) on the certified frontier of a target μ (or ε at δ) and
ranks them by simulated regret (:func:`bandits.tuner.tune_thompson`).

Every input error prints one line naming the option and its range and exits with status 2.

Example (the error line goes to stderr; the return value is the exit status):
    >>> from dpaudit.cli.main import main
    >>> main(["run", "ts", "--reps", "-1"])
    2
    >>> main(["tune", "ts", "--target-mu", "2", "--horizon", "2000", "--reps", "2", "--candidates", "3",
    ...       "--json"])  # doctest: +ELLIPSIS
    {
      "candidates": [
    ...
    0
"""

from __future__ import annotations

import argparse
from concurrent.futures import Executor

import numpy as np

from dpaudit.cli.common import UsageError, emit_json, integer, number

DEFAULT_ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"
DEFAULT_HORIZON = 100_000
DEFAULT_REPS = 10
DEFAULT_MU = 1.0
DEFAULT_AUDIT_TRIALS = 2000
DEFAULT_AUDIT_PRIVATE_ROUNDS = 2000


def register(sub: argparse._SubParsersAction) -> None:
    run_p = sub.add_parser("run", help="simulate, certify and audit a private algorithm")
    parser_class = type(run_p)
    run_kinds = run_p.add_subparsers(
        dest="kind", required=True, metavar="SUBCOMMAND", parser_class=parser_class
    )
    ts = run_kinds.add_parser(
        "ts",
        help="Gaussian Thompson sampling with (b, c) (seed 004): regret, certified privacy, audit",
        description="With no options: seed 004 section 5.1 (Bernoulli, T = 1e5, 10 reps) at 1-GDP.",
    )
    ts.add_argument(
        "--env",
        metavar="SPEC",
        default=None,
        help=f"environment, e.g. bernoulli:0.75,0.5 or truncexp:0.1,1,2 (default {DEFAULT_ENV})",
    )
    ts.add_argument("--horizon", "-T", type=integer("--horizon", 2), default=DEFAULT_HORIZON)
    ts.add_argument("--reps", "-R", type=integer("--reps", 1), default=DEFAULT_REPS)
    ts.add_argument(
        "--prepulls",
        "-b",
        type=integer("--prepulls", 0),
        default=None,
        help="pre-pulls per arm (default: rule of thumb for the budget)",
    )
    ts.add_argument(
        "--variance-scale",
        "-c",
        type=number("--variance-scale", 1.0),
        default=None,
        help="variance scale c >= 1 (needs --prepulls; default: on the budget frontier)",
    )
    ts.add_argument(
        "--target-mu",
        type=number("--target-mu", 0.0, low_open=True),
        default=None,
        help=f"GDP budget used to choose (b, c) (default {DEFAULT_MU:g})",
    )
    ts.add_argument(
        "--delta",
        type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
        default=1e-6,
        help="report epsilon at this delta (default 1e-6)",
    )
    ts.add_argument(
        "--audit-trials",
        type=integer("--audit-trials", 0),
        default=DEFAULT_AUDIT_TRIALS,
        help=f"neighbouring-run pairs for the audit, 0 to skip (default {DEFAULT_AUDIT_TRIALS})",
    )
    ts.add_argument(
        "--audit-horizon",
        type=integer("--audit-horizon", 2),
        default=None,
        help=f"horizon of the audited runs (default b*N + {DEFAULT_AUDIT_PRIVATE_ROUNDS}, at most --horizon)",
    )
    ts.add_argument("--seed", type=integer("--seed", 0), default=0)
    ts.add_argument("--json", action="store_true", help="print one JSON object (no progress bars)")
    ts.add_argument("--plot", metavar="FILE.png", help="draw the regret curves")
    ts.set_defaults(handler=run_ts)

    tune_p = sub.add_parser("tune", help="choose the parameters of a private algorithm at a fixed budget")
    tune_kinds = tune_p.add_subparsers(
        dest="kind", required=True, metavar="SUBCOMMAND", parser_class=parser_class
    )
    tt = tune_kinds.add_parser("ts", help="(b, c) of Gaussian Thompson sampling on the certified frontier")
    target = tt.add_mutually_exclusive_group(required=True)
    target.add_argument("--target-mu", type=number("--target-mu", 0.0, low_open=True))
    target.add_argument("--target-epsilon", type=number("--target-epsilon", 0.0, low_open=True))
    tt.add_argument(
        "--delta",
        type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
        default=None,
        help="with --target-epsilon: the delta of the (epsilon, delta) budget",
    )
    tt.add_argument("--horizon", "-T", type=integer("--horizon", 2), default=DEFAULT_HORIZON)
    tt.add_argument(
        "--arms",
        "-N",
        type=integer("--arms", 2),
        default=None,
        help="number of arms (default: from --env; without --env, Bernoulli means "
        "evenly spaced from 0.75 to 0.25)",
    )
    tt.add_argument("--env", metavar="SPEC", default=None, help=f"environment (default {DEFAULT_ENV})")
    tt.add_argument("--reps", "-R", type=integer("--reps", 1), default=DEFAULT_REPS)
    tt.add_argument(
        "--candidates",
        type=integer("--candidates", 1),
        default=10,
        help="number of b values, log-spaced from 0 to the largest feasible (default 10)",
    )
    tt.add_argument("--seed", type=integer("--seed", 0), default=0)
    tt.add_argument(
        "--workers",
        type=integer("--workers", 1),
        default=1,
        help="processes simulating candidates in parallel (default 1)",
    )
    tt.add_argument("--json", action="store_true", help="print one JSON object (no progress bars)")
    tt.add_argument("--plot", metavar="FILE.png", help="draw regret against b and the regret curves")
    tt.set_defaults(handler=tune_ts)


def _env(spec: str | None, arms: int | None = None):
    from bandits.environments import parse_env

    if spec is None:
        if arms is None or arms == 5:
            return parse_env(DEFAULT_ENV)
        means = ",".join(f"{m:.6g}" for m in np.linspace(0.75, 0.25, arms))
        return parse_env(f"bernoulli:{means}")
    try:
        env = parse_env(spec)
    except ValueError as exc:
        raise UsageError(f"--env: {exc}") from None
    if arms is not None and arms != env.n_arms:
        raise UsageError(f"--arms must equal the number of arms of --env ({env.n_arms}), got {arms}")
    return env


def _check_prepulls(b: int, arms: int, horizon: int) -> None:
    if b * arms >= horizon:
        raise UsageError(
            f"--prepulls must be in [0, {(horizon - 1) // arms}] (b*N < T with N = {arms}, "
            f"T = {horizon}), got {b}"
        )


def run_ts(args: argparse.Namespace) -> int:
    from bandits.report import plot_run, run_thompson
    from bandits.tuner import budget_pair, max_prepulls

    env = _env(args.env)
    T, N = args.horizon, env.n_arms
    if args.variance_scale is not None and args.target_mu is not None:
        raise UsageError("give --variance-scale (with --prepulls) or --target-mu, not both")
    if args.variance_scale is not None and args.prepulls is None:
        raise UsageError("--variance-scale needs --prepulls")
    if args.prepulls is not None:
        _check_prepulls(args.prepulls, N, T)
    if args.variance_scale is not None:
        b, c = args.prepulls, args.variance_scale
        choice = "given on the command line"
    else:
        mu = DEFAULT_MU if args.target_mu is None else args.target_mu
        if T < 2:
            raise UsageError("--horizon must be >= 2")
        if args.prepulls is not None:
            bmax = max_prepulls(T, N, mu)
            if args.prepulls > bmax:
                raise UsageError(
                    f"--prepulls must be in [0, {bmax}] to meet --target-mu {mu:g} with c >= 1, "
                    f"got {args.prepulls}"
                )
            b, c = budget_pair(T, N, mu, args.prepulls)
            choice = f"b given, c on the certified {mu:g}-GDP frontier"
        else:
            b, c = budget_pair(T, N, mu)
            choice = (
                f"rule of thumb for {mu:g}-GDP: b = round(6 sqrt(T)/mu) capped at c >= 1, "
                f"c on the certified frontier (dpaudit tune ts searches instead)"
            )
    Ta = args.audit_horizon
    if Ta is None:
        Ta = min(T, b * N + DEFAULT_AUDIT_PRIVATE_ROUNDS)
    elif args.audit_trials and b * N >= Ta:
        raise UsageError(
            f"--audit-horizon must be > b*N = {b * N} (pre-pulls leave no private rounds), got {Ta}"
        )
    progress = not args.json
    rep = run_thompson(
        env,
        T,
        reps=args.reps,
        prepulls=b,
        variance_scale=c,
        audit_trials=args.audit_trials,
        seed=args.seed,
        delta=args.delta,
        progress=progress,
        audit_horizon=Ta,
        choice=choice,
    )
    if args.plot:
        plot_run(rep, args.plot)
    if args.json:
        emit_json(rep.to_dict())
    else:
        print(rep.summary())
        if args.plot:
            print(f"plot written to {args.plot}")
    return 0


def tune_ts(args: argparse.Namespace) -> int:
    from bandits.tuner import max_prepulls, plot_tuning, resolve_target_mu, tune_thompson

    if args.target_epsilon is not None and args.delta is None:
        raise UsageError("--target-epsilon needs --delta in (0, 1)")
    if args.target_mu is not None and args.delta is not None:
        raise UsageError("--delta is only used with --target-epsilon")
    env = _env(args.env, args.arms)
    mu = resolve_target_mu(args.target_mu, args.target_epsilon, args.delta)
    bmax = max_prepulls(args.horizon, env.n_arms, mu)
    executor: Executor | None = None
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(args.workers)
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
            progress=not args.json,
        )
    finally:
        if executor is not None:
            executor.shutdown()
    if args.plot:
        plot_tuning(res, args.plot)
    if args.json:
        emit_json(res.to_dict())
        return 0
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
        f"best: b = {best.b}, c = {best.c:.6g} (certified mu = {best.mu:.6f}), "
        f"pseudo-regret {best.regret_mean:.1f} ± {best.regret_stderr:.1f}; took {res.elapsed:.1f} s"
    )
    if args.plot:
        print(f"plot written to {args.plot}")
    return 0
