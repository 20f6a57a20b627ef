"""``dpaudit tune dp-ts-ucb``: DP-TS-UCB's α on the certified frontier of a target μ (or ε at δ),
ranked by simulated regret (:func:`bandits.dp_ts_ucb.tuner.tune_dp_ts_ucb`).

Registered beside ``dpaudit tune ts`` (:mod:`dpaudit.cli.run`); the tuner loads in the handler, so
``dpaudit --help`` imports no NumPy.

Example (the error line goes to stderr; the return value is the exit status):
    >>> from dpaudit.cli.main import main
    >>> main(["tune", "dp-ts-ucb", "--target-mu", "1", "--delta", "1e-6"])
    2
"""

from __future__ import annotations

import argparse
import sys

from dpaudit.cli.common import (
    MAX_HORIZON,
    MAX_REPS,
    UsageError,
    check_simulation,
    emit_json,
    integer,
    number,
)
from dpaudit.cli.executors import add_parallel_options, parallel
from dpaudit.formatting import fmt_up

__all__ = ["register_dp_ts_ucb", "tune_dp_ts_ucb_command"]


def register_dp_ts_ucb(tune_kinds: argparse._SubParsersAction) -> None:
    """Add ``dpaudit tune dp-ts-ucb`` to the ``tune`` subcommands."""
    p = tune_kinds.add_parser("dp-ts-ucb",
                              help="alpha, first epoch and samples of DP-TS-UCB within a certified budget")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--target-mu", type=number("--target-mu", 0.0, low_open=True), help="GDP budget mu")
    target.add_argument("--target-epsilon", type=number("--target-epsilon", 0.0, low_open=True),
                        help="(epsilon, delta) budget: epsilon (needs --delta)")
    p.add_argument("--delta", type=number("--delta", 0.0, 1.0, low_open=True, high_open=True), default=None,
                   help="with --target-epsilon: the delta of the (epsilon, delta) budget")
    p.add_argument("--horizon", "-T", type=integer("--horizon", 2, MAX_HORIZON), default=100_000,
                   help="rounds (default 100000)")
    p.add_argument("--env", metavar="SPEC", default=None,
                   help="environment (default: the instance of 'dpaudit run dp-ts-ucb')")
    p.add_argument("--reps", "-R", type=integer("--reps", 1, MAX_REPS), default=10,
                   help="repetitions (default 10)")
    p.add_argument("--candidates", type=integer("--candidates", 1, 101), default=11,
                   help="number of alpha values, evenly spaced in [0, 1] (default 11)")
    p.add_argument("--seed", type=integer("--seed", 0, 2**63 - 1), default=0, help="root seed (default 0)")
    p.add_argument("--frontier-only", action="store_true",
                   help="only the most samples phi the budget allows, first epochs 1, 4, 16, 64 and one "
                        "confirmation stage (20-30x fewer runs; the search of the stored leaderboards)")
    add_parallel_options(p, "processes for the candidates' runs; the numbers do not depend on it")
    p.add_argument("--json", action="store_true", help="print one JSON object (no progress bars)")
    p.set_defaults(handler=tune_dp_ts_ucb_command)  # fmt: skip


def tune_dp_ts_ucb_command(args: argparse.Namespace) -> int:
    """The handler of ``dpaudit tune dp-ts-ucb``: exit status 0, or :class:`UsageError` (2)."""
    from bandits.dp_ts_ucb.spec import DEFAULT_ENV
    from bandits.dp_ts_ucb.tuner import (
        FIRST_EPOCHS,
        tune_dp_ts_ucb,
        tuning_candidates,
        tuning_runs,
    )
    from bandits.environments import parse_env
    from bandits.thompson.frontier import resolve_target_mu

    if args.target_epsilon is not None and args.delta is None:
        raise UsageError("--target-epsilon needs --delta in (0, 1)")
    if args.target_mu is not None and args.delta is not None:
        raise UsageError("--delta is only used with --target-epsilon")
    try:
        env = parse_env(DEFAULT_ENV if args.env is None else args.env)
    except ValueError as exc:
        raise UsageError(f"--env: {exc}") from None
    what = f"--horizon x --reps x --candidates x {len(FIRST_EPOCHS)} first epochs"
    check_simulation(args.horizon, args.reps * args.candidates * len(FIRST_EPOCHS), env.n_arms, what)
    try:
        if not args.frontier_only:  # the field is larger: count its runs before simulating any
            mu = resolve_target_mu(args.target_mu, args.target_epsilon, args.delta)
            n = len(tuning_candidates(mu, args.horizon, args.candidates))
            runs = tuning_runs(n, args.reps, below_frontier=True)
            check_simulation(args.horizon, runs, env.n_arms, f"--horizon x the {runs} runs of {n} candidates")
    except ValueError as exc:
        raise UsageError(f"--target-mu/--target-epsilon: {exc}") from None
    par = parallel(args)
    try:
        res = tune_dp_ts_ucb(env, args.horizon, target_mu=args.target_mu, target_epsilon=args.target_epsilon,
                             delta=args.delta, reps=args.reps, seed=args.seed, num=args.candidates,
                             below_frontier=not args.frontier_only, executor=par.executor,
                             progress=not args.json and sys.stderr.isatty())  # fmt: skip
    except ValueError as exc:
        raise UsageError(f"--target-mu/--target-epsilon: {exc}") from None
    finally:
        par.close()
    if args.json:
        emit_json(res.to_dict())
        return 0
    budget = f"{res.target_mu:.6g}"
    if not args.frontier_only:
        where = f"within the certified budget mu = {budget} (phi: the most it allows, and 1, 2, 3, ... below)"
    else:
        where = f"on the certified frontier mu = {budget} (c0: the most samples phi the budget allows)"
    print(f"alpha and first epoch {where}; T = {res.horizon}, {res.reps} reps, seed {res.seed} (same for "
          f"every candidate), {res.env}")  # fmt: skip
    print(res.table(None if args.frontier_only else 20))
    if res.confirmed:
        print(res.confirmation())
    b = res.best
    print(f"best: alpha = {b.alpha:.4g}, first epoch = {b.first_epoch}, c0 = {b.c0:.6g}, phi = {b.samples} "
          f"(certified mu = "
          f"{fmt_up(b.mu)}), pseudo-regret {b.regret_mean:.1f} ± {b.regret_stderr:.1f} on the first "
          f"{res.reps} runs; took {res.elapsed:.1f} s")
    return 0
