"""``dpaudit calibrate``: the parameter that meets a target ε at δ, certified.

``dpaudit calibrate dpsgd --target-epsilon E --delta D --sampling-rate Q --steps K`` prints the
smallest noise multiplier whose certified ε (the best of ``rdp`` and ``pld``) is at most E; give
``--noise-multiplier`` instead of one of ``--sampling-rate`` / ``--steps`` to solve for that one.
``--json`` prints one object whose first key is the calibrated parameter (``noise_multiplier``,
``sampling_rate`` or ``steps``). Module-level imports are the standard library and the CLI's
shared pieces only.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from dpaudit.cli.common import emit_json, fmt, number
from dpaudit.cli.epsilon import add_dpsgd_options, dpsgd_step

if TYPE_CHECKING:
    from dpaudit.events import PrivacyEvent


HELP = "the noise, sampling rate or steps that meet a target epsilon"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help=HELP)
    kinds = p.add_subparsers(dest="kind", required=True, metavar="SUBCOMMAND", parser_class=type(p))
    d = kinds.add_parser("dpsgd", help="DP-SGD: solve for the one of noise multiplier, sampling rate and "
                                       "steps that is not given")
    d.add_argument("--target-epsilon", type=number("--target-epsilon", 0.0, low_open=True), required=True,
                   help="the epsilon to meet")
    d.add_argument("--delta", type=number("--delta", 0.0, 1.0, low_open=True, high_open=True), required=True,
                   help="at this delta")
    add_dpsgd_options(d, noise_required=False)
    d.add_argument("--rtol", type=number("--rtol", 1e-9, 0.5), default=1e-3,
                   help="relative width of the final bracket (the answer is within it of the optimum)")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from dpaudit.accounting.calibration import calibrate_dpsgd

    wor = args.sampling != "poisson"  # fixed-size batches, drawn without or with replacement
    if args.dataset_size is not None and args.batch_size is not None and not wor:
        if args.sampling_rate is not None:
            raise ValueError("give either --sampling-rate or --dataset-size with --batch-size, not both")
        args.sampling_rate = args.batch_size / args.dataset_size
        args.dataset_size = args.batch_size = None
    rate = args.sampling_rate
    if wor and args.dataset_size and args.batch_size:
        rate = args.batch_size / args.dataset_size
    given = [args.noise_multiplier, args.steps, rate]
    if sum(v is None for v in given) != 1:
        raise ValueError("give exactly two of --noise-multiplier, --steps and --sampling-rate (or "
                         "--dataset-size with --batch-size); the third is calibrated")
    if wor and rate is None:
        raise ValueError(f"--sampling {args.sampling} needs --dataset-size and --batch-size (the batch "
                         "size is not calibrated)")

    def step(q: float, sigma: float) -> PrivacyEvent:
        if not wor:
            args.sampling_rate = q
        return dpsgd_step(args, sigma)

    result = calibrate_dpsgd(target_epsilon=args.target_epsilon, delta=args.delta, sampling_rate=rate,
                             noise_multiplier=args.noise_multiplier, steps=args.steps, rtol=args.rtol,
                             step=step)
    target = result.parameter
    if args.json:
        out = result.to_dict()
        if target == "steps":
            out["steps"] = int(result.value)
        emit_json(out)
        return 0
    value = f"{int(result.value)}" if target == "steps" else f"{result.value:.6g}"
    other = f"{result.infeasible:.6g}"
    if math.isinf(result.infeasible):
        other = "none (the largest value is feasible)"
    print(f"{target} = {value}: certified epsilon = {fmt(result.epsilon)} <= {args.target_epsilon:g} "
          f"at delta = {args.delta:g} (by {result.method})")
    print(f"  nearest value evaluated above the target: {other} (relative tolerance {args.rtol:g}); "
          f"{result.evaluations} evaluations, {result.seconds:.1f} s")
    return 0
